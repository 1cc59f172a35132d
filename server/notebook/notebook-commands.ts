/**
 * A notebook command applied to the document: checked against it
 * (notebook-ops.ts, template-cells.ts), then events, stored, or a thrown
 * CommandError with nothing changed. Separate from the runtime, which
 * decides whether a command is taken at all (leaving, the kernel cap) and
 * owns the parts this dispatch hands work to.
 */
import { randomUUID } from "node:crypto";
import { newCell } from "../core/notebook/notebook-state";
import type { Cell, KernelSpec } from "../core/protocol/notebook-model";
import type { NotebookCommand } from "../core/protocol/socket-api";
import { sourceHash } from "../core/protocol/source-hash";
import { assertNever } from "../core/assert-never";
import type { KernelSession } from "../kernel/kernel-session";
import { CommandError, SourceConflictError } from "../errors";
import type { ExecutionRecording } from "./execution-recording";
import { checkKernelSpec, type KernelHosts } from "./kernel-hosts";
import { deleteCell, findCell, insertCell, moveCell, setKind, setSource } from "./notebook-ops";
import { runKernel, setRunState, type RuntimeContext } from "./runtime-context";
import { assertEditable, findQuestion, questionAlreadyRun, staleExperimentCells } from "./template-cells";
import type { TemplateWork } from "./template-work";

/** The commands a runtime applies (open, presence and the assist ops are answered elsewhere). */
export type AppliedCommand = Exclude<NotebookCommand, { op: "open" | "presence" | "complete" | "inspect" }>;

export interface CommandParts {
  ctx: RuntimeContext;
  kernel: Pick<KernelSession, "status" | "placement" | "host" | "execute" | "interrupt" | "restart" | "shutdown">;
  hosts: KernelHosts;
  recording: ExecutionRecording;
  templates: TemplateWork;
}

export async function applyCommand(parts: CommandParts, command: AppliedCommand, by: string): Promise<void> {
  const { ctx, kernel } = parts;
  switch (command.op) {
    case "insert-cell": {
      const event = insertCell(ctx.doc, command.index, newCell(command.cell.id, command.cell.kind, command.cell.source));
      ctx.events.emit(event);
      await ctx.persistence.insertCell(event.index, command.cell);
      return;
    }
    case "delete-cell":
      ctx.events.emit(deleteCell(ctx.doc, command.cellId));
      parts.recording.forget(command.cellId);
      await ctx.persistence.deleteCell(command.cellId);
      return;
    case "move-cell": {
      const event = moveCell(ctx.doc, command.cellId, command.toIndex);
      ctx.events.emit(event);
      await ctx.persistence.moveCell(command.cellId, event.toIndex);
      return;
    }
    case "set-source": {
      const cell = findCell(ctx.doc, command.cellId);
      if (cell.source !== command.source) assertEditable(cell);
      const stale = command.baseHash !== undefined && sourceHash(cell.source) !== command.baseHash;
      if (stale && !command.force && cell.source !== command.source) throw new SourceConflictError(cell.id, cell.source);
      if (cell.source === command.source) {
        // The text is shown already; if its write failed (the database was away), this send is the page's retry: store it now.
        if (ctx.persistence.sourceUnstored(command.cellId)) await ctx.persistence.setSource(command.cellId, command.source);
        return;
      }
      ctx.events.emit(setSource(ctx.doc, command.cellId, command.source, by));
      await ctx.persistence.setSource(command.cellId, command.source);
      return;
    }
    case "set-kind":
      for (const event of setKind(ctx.doc, command.cellId, command.kind)) ctx.events.emit(event);
      await ctx.persistence.setKind(command.cellId, command.kind);
      return;
    case "execute":
      execute(parts, command.cellIds, command.sourceHashes ?? {});
      return;
    case "clear-outputs":
      for (const cellId of command.cellIds) parts.recording.clearOutputs(findCell(ctx.doc, cellId).id);
      return;
    case "set-parameters":
      return parts.templates.setParameters(command.cellId, command.values);
    case "detach-template":
      return parts.templates.detach(command.cellId);
    case "reattach-template":
      return parts.templates.reattach(command.cellId);
    case "undo-reattach":
      return parts.templates.undoReattach(command.cellId);
    case "commit-prediction":
      return commitPrediction(ctx, command.questionId, command.choice);
    case "interrupt":
      kernel.interrupt();
      return;
    case "set-kernel-spec":
      return setKernelSpec(parts, { hostId: command.hostId, gpus: command.gpus });
    case "restart":
      return kernel.restart();
    case "shutdown":
      return kernel.shutdown();
    default:
      assertNever(command);
  }
}

/**
 * Runs the stored sources; a cell whose text is not the one the user sees
 * (`sourceHashes`) is a conflict. A scenario's verdicts cell first queues the
 * experiment cells whose evidence this kernel does not have for the values
 * shown: they run visibly, under their own cells, before the verdicts.
 */
function execute({ ctx, kernel, recording }: CommandParts, cellIds: string[], sourceHashes: Record<string, string>): void {
  const asked = cellIds.map((cellId) => findCell(ctx.doc, cellId));
  const cells: Cell[] = [];
  for (const cell of asked) {
    const stale = staleExperimentCells(ctx.doc, cell, (other) => recording.ranAsIs(other));
    cells.push(...stale.filter((other) => !cells.includes(other) && !asked.includes(other)), cell);
  }
  const busy = cells.find((cell) => cell.runState !== "idle");
  if (busy) throw new CommandError("busy", `cell ${busy.id} is already queued or running`);
  for (const cell of cells) {
    const seen = sourceHashes[cell.id];
    // Checked for every cell before anything runs.
    if (seen !== undefined && seen !== sourceHash(cell.source)) throw new SourceConflictError(cell.id, cell.source);
  }
  for (const cell of cells) {
    if (cell.kind !== "code") continue;
    setRunState(ctx, cell.id, "queued");
    // The id is the stored execution's: what the kernel records evidence under is what the charts read.
    const executionId = randomUUID();
    ctx.persistence.executionQueued({ id: executionId, cellId: cell.id, source: cell.source, template: cell.template }, { kernel: runKernel(kernel, ctx.doc) });
    kernel.execute(cell.source, recording.sinkFor(cell.id, executionId, sourceHash(cell.source)), { cellId: cell.id, executionId });
  }
}

async function commitPrediction(ctx: RuntimeContext, questionId: string, choice: string): Promise<void> {
  const question = findQuestion(ctx.doc, questionId);
  if (!question.choices.includes(choice)) throw new CommandError("invalid", `"${choice.slice(0, 80)}" is not one of the choices of ${questionId}`);
  const existing = ctx.doc.predictions[questionId];
  if (existing) throw new CommandError("conflict", `a prediction for ${questionId} was already committed (${existing.choice}); predictions are kept as committed`);
  const afterRun = questionAlreadyRun(ctx.doc, questionId);
  const prediction = await ctx.persistence.commitPrediction({ questionId, question: question.text, choice, afterRun });
  ctx.events.emit({ type: "prediction-committed", prediction });
}

/** Checked against the lab's hosts; takes effect at the next kernel start (a running kernel keeps its host and GPUs). */
async function setKernelSpec({ ctx, hosts }: CommandParts, spec: KernelSpec): Promise<void> {
  checkKernelSpec(hosts, spec);
  const current = ctx.doc.kernelSpec;
  if (current.hostId === spec.hostId && current.gpus === spec.gpus) return;
  ctx.events.emit({ type: "kernel-spec-changed", spec });
  await ctx.persistence.setKernelSpec(spec);
}
