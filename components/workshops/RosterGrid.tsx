"use client";
/** The console's roster: one row per participant, in the order they joined. */
import type { RosterRow } from "../../server/core/protocol/workshop-model";
import { rosterCard } from "./model/workshop-console-words";
import RosterRowView from "./RosterRowView";

import "./RosterGrid.css";

interface Props {
  roster: readonly RosterRow[];
  ended: boolean;
  /** Notebooks whose kernel restart is out. */
  restarting: readonly string[];
  onRestart(notebookId: string): void;
}

export default function RosterGrid({ roster, ended, restarting, onRestart }: Props) {
  if (roster.length === 0) {
    return (
      <p className="list-empty" data-testid="roster-empty">
        Nobody has joined yet. Give the class the join link above.
      </p>
    );
  }
  return (
    <table className="roster" data-testid="roster">
      <thead>
        <tr>
          <th>Participant</th>
          <th>Notebook and step</th>
          <th>Kernel</th>
          <th>Last verdicts</th>
          <th>Predictions</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {roster.map((row) => {
          const card = rosterCard(row, ended);
          return <RosterRowView key={card.participantId} card={card} restarting={card.notebook !== null && restarting.includes(card.notebook.id)} onRestart={onRestart} />;
        })}
      </tbody>
    </table>
  );
}
