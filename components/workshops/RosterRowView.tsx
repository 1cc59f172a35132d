"use client";
/**
 * One participant on the roster: online or not, their place in the queue,
 * where they are, their kernel, their latest verdicts and predictions; a
 * peek at their notebook (read-only; the server never lets a facilitator edit it) and a
 * kernel restart.
 */
import type { RosterCard } from "./model/workshop-console-words";

interface Props {
  card: RosterCard;
  restarting: boolean;
  onRestart(notebookId: string): void;
}

export default function RosterRowView({ card, restarting, onRestart }: Props) {
  return (
    <tr className="roster-row" data-testid="roster-row" data-participant-id={card.participantId} data-kernel={card.kernel} data-online={card.online}>
      <td>
        <span className={`roster-dot${card.online ? " roster-dot-online" : ""}`} data-testid="roster-online" title={card.online ? "online now" : "not connected"} aria-label={card.online ? "online" : "offline"} />
        <span className="roster-name" data-testid="roster-name">
          {card.name}
        </span>
        {card.queue !== null && (
          <span className="roster-queue" data-testid="roster-queue">
            {card.queue}
          </span>
        )}
      </td>
      <td>
        {card.notebook === null ? (
          <span className="roster-muted">no notebook yet</span>
        ) : (
          <>
            <span className="roster-notebook" data-testid="roster-notebook">
              {card.notebook.title}
            </span>
            <span className="roster-step" data-testid="roster-step">
              {card.step}
            </span>
          </>
        )}
      </td>
      <td>
        <span className={`roster-kernel roster-kernel-${card.kernelTone}`} data-testid="roster-kernel" data-state={card.kernel}>
          {card.kernelLabel}
        </span>
      </td>
      <td data-testid="roster-verdicts">
        {card.verdicts === null ? (
          <span className="roster-muted">none yet</span>
        ) : card.verdicts.length === 0 ? (
          <span className="roster-muted">no verdict decided</span>
        ) : (
          card.verdicts.map((entry) => (
            <span key={entry.verdict} className={`roster-verdict roster-verdict-${entry.verdict}`} data-testid="roster-verdict" data-verdict={entry.verdict} data-count={entry.count}>
              {entry.count} {entry.words}
            </span>
          ))
        )}
      </td>
      <td data-testid="roster-predictions" data-count={card.predictions}>
        {card.predictions === 0 ? <span className="roster-muted">none</span> : `${card.predictions} committed`}
      </td>
      <td className="roster-actions">
        {card.notebook !== null && (
          <a className="button button-small" data-testid="roster-peek" href={card.notebook.href} target="_blank" rel="noopener noreferrer" title="Opens their notebook in a new tab, read-only">
            Peek
          </a>
        )}
        {card.notebook !== null && (
          <button
            type="button"
            className="button button-small"
            data-testid="restart-kernel"
            disabled={!card.canRestart || restarting}
            onClick={() => {
              if (card.notebook !== null) onRestart(card.notebook.id);
            }}
          >
            {restarting ? "Restarting…" : "Restart kernel"}
          </button>
        )}
      </td>
    </tr>
  );
}
