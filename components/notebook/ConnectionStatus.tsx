"use client";
/** Whether this page is talking to the server, and whether typed code is still waiting to be saved. */
import type { ConnectionState } from "./model/connection";
import { assertNever } from "../../server/core/assert-never";

import "./ConnectionStatus.css";

interface Props {
  state: ConnectionState;
  unsavedCells: number;
}

export default function ConnectionStatus({ state, unsavedCells }: Props) {
  const unsaved =
    unsavedCells === 0 ? "" : ` · ${unsavedCells} cell${unsavedCells === 1 ? "" : "s"} not yet saved (kept in this browser)`;
  return (
    <div className={`connection-status connection-${state.status}`} data-testid="connection-status" data-state={state.status}>
      <span className="connection-dot" aria-hidden="true" />
      {describe(state)}
      {state.status !== "connected" && unsaved}
    </div>
  );
}

function describe(state: ConnectionState): string {
  switch (state.status) {
    case "connecting":
      return "Connecting…";
    case "connected":
      return "Connected";
    case "reconnecting":
      return state.attempt > 0 ? `Reconnecting… (attempt ${state.attempt})` : "Reconnecting…";
    case "offline":
      return `Offline: ${state.reason}`;
    case "not-found":
      return "Notebook not found";
    case "signed-out":
      return `Signed out: ${state.reason}`;
    default:
      return assertNever(state);
  }
}
