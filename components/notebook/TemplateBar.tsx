"use client";
/**
 * Shown instead of the parameter form on a templated cell the user detached:
 * says the form no longer drives the code, and offers the way back.
 */
import type { CellTemplate } from "../../server/core/protocol/notebook-model";

import "./TemplateBar.css";

interface Props {
  template: CellTemplate;
  onReattach(): void;
}

export default function TemplateBar({ template, onReattach }: Props) {
  return (
    <div className="template-bar" data-testid="template-detached" data-template-id={template.id}>
      <span className="template-bar-text">
        Detached from template <code>{template.id}</code> — the form no longer applies.
      </span>
      <button
        type="button"
        className="button"
        data-testid="template-reattach"
        title="Reattach: re-render from the template with the scenario's values; discards your edits to this cell (Undo, offered for a few seconds, puts them back)"
        onClick={onReattach}
      >
        Reattach
      </button>
    </div>
  );
}
