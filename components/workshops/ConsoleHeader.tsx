"use client";
/**
 * The console's head: the workshop's title, join link, times, resources and
 * state, and what the facilitator changes about it (room open or closed,
 * capacity, pace, the next step, ending it, the class summary).
 */
import { useState } from "react";
import { MAX_WORKSHOP_CAPACITY } from "../../server/core/protocol/socket-api";
import { WORKSHOP_PACES } from "../../server/core/protocol/workshop-model";
import CopyLinkButton from "../shell/CopyLinkButton";
import type { WorkshopConsoleController } from "./model/workshop-console";
import type { ConsoleHeader as Header } from "./model/workshop-console-words";
import WorkshopSizingNote from "./WorkshopSizingNote";

type Actions = Pick<WorkshopConsoleController, "setClosed" | "setCapacity" | "setPace" | "revealNextStep" | "askEnd" | "cancelEnd" | "endNow">;

interface Props {
  header: Header;
  confirmingEnd: boolean;
  busy: boolean;
  actions: Actions;
}

const STATE_WORDS = { open: "open to new joiners", closed: "closed to new joiners", ended: "ended" } as const;
const PACE_WORDS = { self: "Self-paced", led: "Led" } as const;

export default function ConsoleHeader({ header, confirmingEnd, busy, actions }: Props) {
  // What is typed, until sent; the server's value otherwise (another console may change it).
  const [capacity, setCapacity] = useState<string | null>(null);
  const ended = header.state === "ended";

  return (
    <header className="console-head" data-testid="console-head">
      <div className="console-title-line">
        <h1 className="console-title" data-testid="console-title">
          {header.title}
        </h1>
        <span className={`console-state console-state-${header.state}`} data-testid="console-state" data-state={header.state}>
          {STATE_WORDS[header.state]}
        </span>
      </div>
      <div className="console-facts">
        <span className="console-label">Join link</span>
        <span className="console-join">
          <a className="console-join-link" data-testid="console-join-link" href={header.joinUrl}>
            {header.joinUrl}
          </a>
          <CopyLinkButton url={header.joinUrl} testId="console-copy-link" />
        </span>
        <span className="console-label">When</span>
        <span data-testid="console-times">
          {header.starts}; {header.ends}
        </span>
        <span className="console-label">Resources</span>
        <span data-testid="console-resources">{header.resources}</span>
        <span className="console-label">Steps</span>
        <span data-testid="console-reveal">{header.reveal}</span>
      </div>
      {!ended && <WorkshopSizingNote sizing={header.sizing} />}
      {!ended && (
        <div className="console-controls">
          <button type="button" className="button" data-testid="console-close-room" disabled={busy} onClick={() => void actions.setClosed(header.state === "open")}>
            {header.state === "open" ? "Close room" : "Reopen room"}
          </button>
          <form
            className="console-capacity"
            onSubmit={(e) => {
              e.preventDefault();
              if (capacity === null) return;
              void actions.setCapacity(capacity).then((done) => {
                if (done) setCapacity(null);
              });
            }}
          >
            <label className="console-capacity-label">
              Capacity
              <input
                type="number"
                min={1}
                max={MAX_WORKSHOP_CAPACITY}
                step={1}
                data-testid="console-capacity"
                value={capacity ?? String(header.capacity)}
                onChange={(e) => setCapacity(e.target.value)}
              />
            </label>
            <button type="submit" className="button button-small" data-testid="console-capacity-set" disabled={busy || capacity === null || capacity === String(header.capacity)}>
              Set
            </button>
          </form>
          <div className="console-pace" role="group" aria-label="Pace">
            {WORKSHOP_PACES.map((pace) => (
              <button
                key={pace}
                type="button"
                className={`button button-small${header.pace === pace ? " console-pace-on" : ""}`}
                data-testid="console-pace"
                data-pace={pace}
                aria-pressed={header.pace === pace}
                disabled={busy}
                onClick={() => {
                  if (header.pace !== pace) void actions.setPace(pace);
                }}
              >
                {PACE_WORDS[pace]}
              </button>
            ))}
          </div>
          {header.pace === "led" && (
            <button type="button" className="button" data-testid="console-reveal-next" disabled={busy || !header.canRevealNext} onClick={() => void actions.revealNextStep()}>
              Reveal next step
            </button>
          )}
          {confirmingEnd ? (
            <span className="console-end-confirm" role="alert">
              End now? Every participant&apos;s kernel shuts down and their notebooks turn read-only.
              <button type="button" className="button button-small button-danger" data-testid="console-end-confirm" disabled={busy} onClick={() => void actions.endNow()}>
                End workshop
              </button>
              <button type="button" className="button button-small" data-testid="console-end-cancel" onClick={() => actions.cancelEnd()}>
                Cancel
              </button>
            </span>
          ) : (
            <button type="button" className="button button-danger" data-testid="console-end" disabled={busy} onClick={() => actions.askEnd()}>
              End workshop now
            </button>
          )}
        </div>
      )}
      <a className="console-summary" data-testid="console-summary" href={header.summaryHref} download>
        Export class summary (CSV)
      </a>
    </header>
  );
}
