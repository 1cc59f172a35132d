"use client";
/** "Deleted 'X' — Undo": the way back from a deletion, for a few seconds. */
import type { UndoOffer } from "./model/notebook-list";

import "./UndoToast.css";

interface Props {
  offer: UndoOffer;
  onUndo(): void;
  onDismiss(): void;
}

export default function UndoToast({ offer, onUndo, onDismiss }: Props) {
  return (
    <div className="toast" data-testid="undo-toast" role="status">
      <span>
        Deleted ‘{offer.title}’ —{" "}
        <button type="button" className="toast-action" data-testid="undo-delete" onClick={onUndo}>
          Undo
        </button>
      </span>
      <button type="button" className="notice-close" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}
