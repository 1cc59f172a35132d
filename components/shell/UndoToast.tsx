"use client";
/** "Deleted 'X' — Undo", "Reattached … — Undo": the way back from a change that replaced something, for a few seconds. */
import "./UndoToast.css";

interface Props {
  /** What just happened, in words. */
  message: string;
  /** The Undo button's data-testid. */
  undoTestId: string;
  onUndo(): void;
  onDismiss(): void;
}

export default function UndoToast({ message, undoTestId, onUndo, onDismiss }: Props) {
  return (
    <div className="toast" data-testid="undo-toast" role="status">
      <span>
        {message} —{" "}
        <button type="button" className="toast-action" data-testid={undoTestId} onClick={onUndo}>
          Undo
        </button>
      </span>
      <button type="button" className="notice-close" aria-label="Dismiss" onClick={onDismiss}>
        ×
      </button>
    </div>
  );
}
