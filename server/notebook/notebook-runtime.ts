/**
 * One open notebook: its document, its kernel session, and the translation
 * from kernel output to notebook events for every viewer. Commands arrive
 * already validated; each either changes the document and broadcasts, or
 * throws a CommandError.
 */
import type { Cell, CellOutput, NotebookDocument } from "../protocol/notebook-model";
import type { CommandAck, JournalPosition, NotebookCommand, NotebookEvent } from "../protocol/socket-api";
import type { KernelHost } from "../kernel/kernel-host";
import { KernelSession, type ExecutionOutput, type ExecutionSink } from "../kernel/kernel-session";
import { EventCoalescer, type CoalescerOptions } from "./event-coalescer";
import { EventJournal } from "./event-journal";
import { CommandError, deleteCell, findCell, insertCell, moveCell, newCell, setKind, setSource } from "./notebook-ops";
import { OutputRecorder, type OutputBudget } from "./output-recorder";

export interface NotebookRuntimeOptions {
  host: () => KernelHost;
  broadcast: (event: NotebookEvent, seq: number) => void;
  outputBudget?: OutputBudget;
  coalescing?: CoalescerOptions;
  log?: (level: "info" | "warning" | "error", message: string) => void;
}

export class NotebookRuntime {
  readonly kernel: KernelSession;
  private readonly recorders = new Map<string, OutputRecorder>();
  private readonly coalescer: EventCoalescer;
  private readonly journal = new EventJournal();

  constructor(readonly doc: NotebookDocument, private readonly options: NotebookRuntimeOptions) {
    this.coalescer = new EventCoalescer((event) => options.broadcast(event, this.journal.record(event)), {
      tailOf: (cellId) => {
        const recorder = this.recorders.get(cellId);
        return recorder ? { elided: recorder.elided, segments: recorder.tailSegments() } : null;
      },
    }, options.coalescing);
    this.kernel = new KernelSession({ host: options.host(), onLog: options.log });
    this.kernel.onStatus((status) => {
      this.doc.kernel = status;
      this.coalescer.emit({ type: "kernel-status", status });
    });
  }

  /** The document as a new viewer should see it; pending stream text is flushed first so nothing arrives twice. */
  snapshot(): NotebookDocument {
    this.coalescer.flush();
    return structuredClone(this.doc);
  }

  /** What a joining viewer needs: the events it missed since `resume` if we still have them, else a snapshot. */
  join(resume?: JournalPosition): Extract<CommandAck, { ok: true }> {
    this.coalescer.flush();
    const missed = resume ? this.journal.since(resume) : null;
    if (missed) return { ok: true, missed, journal: this.journal.position };
    return { ok: true, notebook: structuredClone(this.doc), journal: this.journal.position };
  }

  async handle(command: Exclude<NotebookCommand, { op: "open" }>, by: string): Promise<void> {
    switch (command.op) {
      case "insert-cell":
        this.coalescer.emit(insertCell(this.doc, command.index, newCell(command.cell.id, command.cell.kind, command.cell.source)));
        return;
      case "delete-cell":
        this.coalescer.emit(deleteCell(this.doc, command.cellId));
        return;
      case "move-cell":
        this.coalescer.emit(moveCell(this.doc, command.cellId, command.toIndex));
        return;
      case "set-source":
        this.coalescer.emit(setSource(this.doc, command.cellId, command.source, by));
        return;
      case "set-kind":
        for (const event of setKind(this.doc, command.cellId, command.kind)) this.coalescer.emit(event);
        return;
      case "execute":
        this.execute(command.cellIds, command.sources, by);
        return;
      case "clear-outputs":
        for (const cellId of command.cellIds) this.clearOutputs(findCell(this.doc, cellId));
        return;
      case "interrupt":
        this.kernel.interrupt();
        return;
      case "restart":
        await this.kernel.restart();
        return;
      case "shutdown":
        await this.kernel.shutdown();
        return;
      default:
        assertNever(command);
    }
  }

  async dispose(): Promise<void> {
    await this.kernel.shutdown();
    this.coalescer.dispose();
  }

  private execute(cellIds: string[], sources: Record<string, string>, by: string): void {
    const cells = cellIds.map((cellId) => findCell(this.doc, cellId));
    const busy = cells.find((cell) => cell.runState !== "idle");
    if (busy) throw new CommandError(`cell ${busy.id} is already queued or running`);
    for (const cell of cells) {
      const source = sources[cell.id];
      if (source !== undefined && source !== cell.source) this.coalescer.emit(setSource(this.doc, cell.id, source, by));
      if (cell.kind !== "code") continue;
      this.setRunState(cell, "queued");
      this.kernel.execute(cell.source, this.sinkFor(cell));
    }
  }

  private sinkFor(cell: Cell): ExecutionSink {
    return {
      started: () => {
        this.clearOutputs(cell);
        this.recorders.set(cell.id, new OutputRecorder(this.options.outputBudget));
        this.setRunState(cell, "running");
      },
      console: (text) => this.recordStream(cell, "stdout", text),
      output: (message) => {
        if (message.type === "stream") this.recordStream(cell, message.name, message.text);
        else this.recordOutput(cell, toCellOutput(message));
      },
      finished: ({ status, executionCount, durationMs }) => {
        this.coalescer.flush();
        if (executionCount !== null) cell.executionCount = executionCount;
        cell.lastRun = { status, durationMs };
        this.setRunState(cell, "idle");
        this.coalescer.emit({ type: "cell-finished", cellId: cell.id, status, durationMs });
      },
    };
  }

  private recordStream(cell: Cell, name: "stdout" | "stderr", text: string): void {
    const recorder = this.recorderOf(cell);
    for (const change of recorder.stream(name, text)) {
      if (change.kind === "append") this.coalescer.append(cell.id, change.name, change.text);
      else if (change.kind === "tail") this.coalescer.tailChanged(cell.id);
    }
    cell.outputs = recorder.outputs();
  }

  private recordOutput(cell: Cell, output: CellOutput): void {
    const recorder = this.recorderOf(cell);
    this.coalescer.flush(); // the viewer's tail must match the recorder's before it is frozen
    recorder.output(output);
    cell.outputs = recorder.outputs();
    this.coalescer.emit({ type: "cell-output", cellId: cell.id, output });
  }

  private recorderOf(cell: Cell): OutputRecorder {
    let recorder = this.recorders.get(cell.id);
    if (!recorder) {
      recorder = new OutputRecorder(this.options.outputBudget);
      this.recorders.set(cell.id, recorder);
    }
    return recorder;
  }

  private clearOutputs(cell: Cell): void {
    this.recorders.delete(cell.id);
    cell.outputs = [];
    this.coalescer.emit({ type: "cell-outputs-cleared", cellId: cell.id });
  }

  private setRunState(cell: Cell, runState: Cell["runState"]): void {
    cell.runState = runState;
    this.coalescer.emit({ type: "cell-run-state", cellId: cell.id, runState, executionCount: cell.executionCount });
  }
}

function toCellOutput(message: Exclude<ExecutionOutput, { type: "stream" }>): CellOutput {
  switch (message.type) {
    case "execute_result":
      return { kind: "result", executionCount: message.count, data: message.data };
    case "display_data":
      return { kind: "display", data: message.data };
    case "error":
      return { kind: "error", ename: message.ename, evalue: message.evalue, traceback: message.traceback };
    default:
      return assertNever(message);
  }
}

function assertNever(value: never): never {
  throw new Error(`unhandled: ${JSON.stringify(value)}`);
}
