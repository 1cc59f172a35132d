/**
 * The intents of a guided scenario's cells: the parameter form (a refusal
 * shows under the form, not as a notice), detaching a cell from its template,
 * reattaching it with a timed Undo, and committing a prediction. Separate
 * from the notebook's plain edits: these are server-side operations on the
 * scenario, answered now, never queued.
 */
import type { ParameterValue } from "../../../server/core/protocol/notebook-model";
import { needOf } from "./notebook-access";
import type { ControlAnswer, NotebookSender } from "./notebook-sender";
import { withFormError, type NotebookViewState } from "./notebook-view-state";
import type { ViewStore } from "../../shell/model/view-store";

export class GuidedCells {
  private undoTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly notebookId: string,
    private readonly store: ViewStore<NotebookViewState>,
    private readonly sender: NotebookSender,
    /** How long the Undo of a reattach is offered (ms). */
    private readonly undoMs: number,
  ) {}

  /** A form change: the server re-renders every attached cell of the scenario, or refuses and nothing changes. */
  setParameters(cellId: string, values: Record<string, ParameterValue>): void {
    if (!this.sender.allowed(needOf("set-parameters"))) return;
    this.setFormError(cellId, null);
    void this.sender.send({ op: "set-parameters", notebookId: this.notebookId, cellId, values }, (error) => this.setFormError(cellId, error));
  }

  detachTemplate(cellId: string): void {
    this.setFormError(cellId, null);
    void this.sender.send({ op: "detach-template", notebookId: this.notebookId, cellId });
  }

  /** Replaces the cell's edits with the template's code; the server keeps the edits, and Undo is offered for a while. */
  reattachTemplate(cellId: string): void {
    const templateId = this.store.getState().doc?.cells.find((c) => c.id === cellId)?.template?.id ?? "";
    void this.sender.send({ op: "reattach-template", notebookId: this.notebookId, cellId }).then((answer) => {
      if (answer === null || !answer.ok) return;
      this.store.update({ undo: { cellId, templateId } });
      if (this.undoTimer !== null) clearTimeout(this.undoTimer);
      this.undoTimer = setTimeout(() => this.dismissUndo(), this.undoMs);
    });
  }

  /** Undo the reattach the toast is about: the server puts the cell's detached code back. */
  undoReattach(): void {
    const offer = this.store.getState().undo;
    if (offer === null) return;
    this.dismissUndo();
    void this.sender.send({ op: "undo-reattach", notebookId: this.notebookId, cellId: offer.cellId });
  }

  dismissUndo(): void {
    if (this.undoTimer !== null) clearTimeout(this.undoTimer);
    this.undoTimer = null;
    if (this.store.getState().undo !== null) this.store.update({ undo: null });
  }

  /** Resolves with the server's answer (null when this viewer may not commit). */
  commitPrediction(questionId: string, choice: string): Promise<ControlAnswer | null> {
    return this.sender.send({ op: "commit-prediction", notebookId: this.notebookId, questionId, choice });
  }

  private setFormError(cellId: string, error: string | null): void {
    const formErrors = this.store.getState().formErrors;
    const next = withFormError(formErrors, cellId, error);
    if (next !== formErrors) this.store.update({ formErrors: next });
  }
}
