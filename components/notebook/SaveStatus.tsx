"use client";
/** The autosave indicator: whether everything typed is on the server, and if not, where it is. */
import type { SaveStatus as SaveStatusModel } from "./model/save-status";
import { saveStatusText } from "./model/save-status";

import "./SaveStatus.css";

interface Props {
  status: SaveStatusModel;
}

export default function SaveStatus({ status }: Props) {
  return (
    <div className={`save-status save-${status.state}`} data-testid="save-status" data-state={status.state} role="status" aria-live="polite">
      {saveStatusText(status)}
    </div>
  );
}
