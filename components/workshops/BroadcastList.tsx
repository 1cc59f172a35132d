"use client";
/** The broadcasts sent so far, newest first. */
import type { WorkshopBroadcast } from "../../server/core/protocol/workshop-model";
import { presetText } from "./model/broadcast-form";
import { formatWhen } from "./model/workshop-console-words";

import "./Broadcasts.css";

interface Props {
  broadcasts: readonly WorkshopBroadcast[];
}

export default function BroadcastList({ broadcasts }: Props) {
  if (broadcasts.length === 0) return <p className="list-empty">No broadcasts yet.</p>;
  return (
    <ol className="broadcast-list" data-testid="broadcasts">
      {[...broadcasts].reverse().map((broadcast) => (
        <li key={broadcast.id} className="broadcast-item" data-testid="broadcast" data-broadcast-id={broadcast.id}>
          <time className="broadcast-time" dateTime={broadcast.at}>
            {formatWhen(broadcast.at)}
          </time>
          {broadcast.message !== null && (
            <span className="broadcast-message" data-testid="broadcast-text">
              {broadcast.message}
            </span>
          )}
          {broadcast.preset !== null && (
            <code className="broadcast-preset-text" data-testid="broadcast-preset-text">
              {presetText(broadcast.preset)}
            </code>
          )}
        </li>
      ))}
    </ol>
  );
}
