/**
 * The notebook controller's pieces over an in-memory end of the socket: the
 * view store, the sender and the document view are the real ones; the
 * transport records what was sent and answers through the protocol's own
 * reply parsers (so an answer the op table would not take is a refusal, as
 * on the wire), and keeps unsaved changes with the real pending-edit rules.
 */
import type { NotebookAccessLevel } from "../../server/core/protocol/accounts-model";
import { newCell } from "../../server/core/notebook/notebook-state";
import type { Cell, CellKind, KernelStatus, NotebookDocument } from "../../server/core/protocol/notebook-model";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import { notebookAnswerOf, type NotebookAnswer, type NotebookSend } from "../../server/core/protocol/ops-notebook";
import type { AssistOp, CellConflicts, ControlCommand } from "../../components/notebook/model/connection";
import { DocumentView, type UnsavedChanges } from "../../components/notebook/model/notebook-document-view";
import type { EditTransport } from "../../components/notebook/model/notebook-edits";
import { NotebookSender, type CommandTransport, type ControlAnswer } from "../../components/notebook/model/notebook-sender";
import { initialViewState, type NotebookViewState } from "../../components/notebook/model/notebook-view-state";
import { recordEdit, type PendingEdits, type StructuralCommand } from "../../components/notebook/model/pending-edits";
import { ViewStore } from "../../components/shell/model/view-store";

/** What the fake server answers: a reply body, or a refusal's words. */
export type Answer = { reply: Record<string, unknown> } | { refuse: string };

export class MemoryTransport implements CommandTransport, EditTransport, UnsavedChanges {
  readonly sent: Array<{ op: string }> = [];
  /** The answer to the next ops, by op (default: `{ ok: true }` with no body). */
  readonly answers = new Map<string, Answer>();
  pendingEdits: PendingEdits = {};
  outboxCommands: StructuralCommand[] = [];
  conflicts: CellConflicts = {};
  saveError: string | null = null;
  private rev = 0;

  sendControl(command: ControlCommand): Promise<ControlAnswer> {
    this.sent.push(command);
    return Promise.resolve(notebookAnswerOf(command.op, this.wire(command.op)));
  }

  sendLab<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    this.sent.push(command);
    return Promise.resolve(labAnswerOf<Op>(command.op, this.wire(command.op)));
  }

  ask<Op extends AssistOp>(command: NotebookSend<Op>): Promise<NotebookAnswer<Op>> {
    this.sent.push(command);
    return Promise.resolve(notebookAnswerOf<Op>(command.op, this.wire(command.op)));
  }

  editSource(cellId: string, source: string, kind: CellKind, index: number, base: string): void {
    this.rev += 1;
    this.pendingEdits = recordEdit(this.pendingEdits, cellId, { source, kind, index, base }, this.rev);
  }

  sendStructural(command: StructuralCommand): void {
    this.sent.push(command);
    this.outboxCommands = [...this.outboxCommands, command];
  }

  /** The ops sent, in order. */
  get ops(): string[] {
    return this.sent.map((c) => c.op);
  }

  private wire(op: string): unknown {
    const answer = this.answers.get(op);
    if (answer === undefined) return { ok: true };
    return "refuse" in answer ? { ok: false, error: answer.refuse, code: "invalid" } : { ok: true, ...answer.reply };
  }
}

export interface Pieces {
  store: ViewStore<NotebookViewState>;
  transport: MemoryTransport;
  sender: NotebookSender;
  view: DocumentView;
  notices(): string[];
}

/** A store, a sender and a document view for a viewer with `access`, showing `cells` (none: the notebook has not opened). */
export function notebookPieces(access: NotebookAccessLevel | null, cells: Cell[] | null = [newCell("a", "code", "x = 1"), newCell("b", "markdown", "# b")]): Pieces {
  const store = new ViewStore(initialViewState({ status: "connected", socketId: "s" }, 0), (run) => run());
  const transport = new MemoryTransport();
  let seq = 0;
  const notify = (message: string): void => store.update({ notices: [...store.getState().notices, { id: ++seq, message }] });
  const sender = new NotebookSender(transport, { access: () => store.getState().access, showing: () => store.getState().doc !== null, notify });
  const view = new DocumentView(store, transport);
  store.update({ access });
  if (cells !== null) view.snapshot(testDoc(cells));
  return { store, transport, sender, view, notices: () => store.getState().notices.map((n) => n.message) };
}

/** A live kernel: a restart would lose its state. */
export const idleKernel: KernelStatus = { state: "idle", info: { pid: 1, hostname: "h", python: "3.11", executable: "/usr/bin/python3", torch: "1.13", deviceMode: "2× cpu (no CUDA)" } };

export function testDoc(cells: Cell[], kernel: KernelStatus = { state: "not-started" }): NotebookDocument {
  return { id: "nb", title: "t", deleted: false, cells, kernel, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };
}
