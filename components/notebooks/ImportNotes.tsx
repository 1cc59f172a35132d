"use client";
/** What an import could not keep as it was (outputs cut to the budget, cells imported detached…), until dismissed. */
import "./ImportNotes.css";

interface Props {
  notes: readonly string[];
  onDismiss(): void;
}

export default function ImportNotes({ notes, onDismiss }: Props) {
  return (
    <div className="import-notes" data-testid="import-notes" role="status">
      <div className="import-notes-body">
        <strong>Imported with {notes.length === 1 ? "a note" : `${notes.length} notes`}:</strong>
        <ul>
          {notes.map((note, index) => (
            <li key={index} data-testid="import-note">
              {note}
            </li>
          ))}
        </ul>
      </div>
      <button type="button" className="button" data-testid="dismiss-import-notes" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
