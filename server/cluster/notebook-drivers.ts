/**
 * Where a notebook's commands run. A notebook's runtime (its document in
 * memory, its kernel, its event journal) lives on one lab server, its
 * driver. The socket edge authorises a command and hands it here; with one
 * server everything runs in this process (LocalDrivers); with several
 * (cluster/lab-cluster.ts) a command for a notebook another server drives
 * is forwarded to it, and its events reach this server's viewers through
 * the socket.io adapter.
 */
import type { DriverAnswer, DriverReply, NotebookOp as CommandOp, NotebookRequest, NotebookSend } from "../core/protocol/ops-notebook";
import type { RunningKernels } from "../core/protocol/kernels-model";
import type { GpuHolder } from "../core/protocol/hosts-model";
import type { ClusterRequest } from "../core/protocol/cluster-messages";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { NotebookRuntime } from "../notebook/notebook-runtime";
import type { WorkshopNotebookRules } from "../workshops/workshop-notebooks";
import { toClientError } from "../errors";
import type { Log } from "../logger";

/** What a workshop participant reads when the lab has no room for one more kernel. */
export const PARTICIPANT_KERNEL_LIMIT =
  "The lab is running as much code as it can hold right now, so your notebook cannot start running yet. Try again in a minute; your facilitator can see that the room is full.";

/** A command as the socket edge passes it on, authorised. */
export interface DrivenCommand<Op extends CommandOp = CommandOp> {
  command: NotebookSend<Op>;
  /** The connection it came from (viewer bookkeeping, who changed what). */
  socketId: string;
  /** From a workshop participant: a led workshop's unrevealed steps are refused. */
  participant: boolean;
}

export type NotebookOp = Extract<ClusterRequest, { kind: "notebook-op" }>["op"];

export interface NotebookDrivers {
  /** Several lab servers share the lab (a console or viewer may be on any of them). */
  readonly several: boolean;
  /** Runs the command where the notebook is driven; failures come back as the ack's error (never thrown). */
  command<Op extends CommandOp>(notebookId: string, driven: DrivenCommand<Op>): Promise<DriverAnswer<Op>>;
  /** A connection of this server joined or left the notebook's room. */
  viewer(notebookId: string, socketId: string, change: "joined" | "left"): void;
  /** A lab command's change to an open notebook (rename, delete, kernel shutdown or restart). */
  notebookOp(notebookId: string, op: NotebookOp): Promise<void>;
  /** The kernels of every server. */
  listKernels(): Promise<RunningKernels>;
  /** Which notebook holds each agent kernel, over every server. */
  agentHolders(): Promise<Map<string, GpuHolder>>;
  /** A workshop ended: its kernels shut down wherever they are driven. */
  workshopEnded(workshopId: string): Promise<void>;
  close(): Promise<void>;
}

/** Where a notebook op runs, and for whom. */
interface DriverContext {
  runtime: NotebookRuntime;
  notebookId: string;
  socketId: string;
  participant: boolean;
}

/** A notebook op's handler: its request in, its own reply out (a wrong reply does not compile); a refusal is thrown. */
export type DriverHandler<Op extends CommandOp> = (command: NotebookRequest<Op>, context: DriverContext) => Promise<DriverReply<Op>>;
type DriverHandlers = { readonly [Op in CommandOp]: DriverHandler<Op> };

/** The ops that change the notebook or its kernel and answer nothing but `ok`. */
async function handled(runtime: NotebookRuntime, command: Parameters<NotebookRuntime["handle"]>[0], socketId: string): Promise<{ ok: true }> {
  await runtime.handle(command, socketId);
  return { ok: true };
}

/** Runs each kind of request against this process's hub: the whole lab with one server, a driver's share with several. */
export class LocalDriver {
  constructor(
    private readonly hub: NotebookHub,
    private readonly workshops: WorkshopNotebookRules,
    private readonly log: Log = () => undefined,
  ) {}

  async command<Op extends CommandOp>(notebookId: string, { command, socketId, participant }: DrivenCommand<Op>): Promise<DriverAnswer<Op>> {
    try {
      const runtime = await this.hub.open(notebookId);
      const handler: DriverHandler<Op> = this.handlers[command.op];
      return await handler(command, { runtime, notebookId, socketId, participant });
    } catch (error) {
      const { error: raw, code, conflict, expected } = toClientError(error);
      if (!expected) this.log("error", `${command.op} on notebook ${notebookId} failed: ${error instanceof Error ? (error.stack ?? raw) : raw}`);
      // A participant is told why in plain words, never an operator's remedy (the kernel list, a setting).
      const message = participant && code === "limit" ? PARTICIPANT_KERNEL_LIMIT : raw;
      return conflict ? { ok: false, error: message, code, conflict } : { ok: false, error: message, code };
    }
  }

  /** Each notebook op, run on the notebook's runtime; a handler answers its op's own reply (ops-notebook.ts). */
  private readonly handlers: DriverHandlers = {
    open: (command, { runtime }) => runtime.join(command.resume),
    presence: (command, { notebookId, socketId }) => {
      this.hub.viewerVisibility(notebookId, socketId, command.visible);
      return Promise.resolve({ ok: true });
    },
    execute: async (command, { runtime, notebookId, socketId, participant }) => {
      // In a workshop led by its facilitator, a participant runs only the steps revealed so far.
      if (participant) await this.workshops.checkRevealed(notebookId, runtime.doc.cells, command.cellIds);
      await runtime.handle(command, socketId);
      // "Taken" means stored: the queued executions are committed before the answer leaves.
      await runtime.settled();
      return { ok: true };
    },
    // Answered from the live kernel (never started for it), in the acknowledgement.
    complete: async (command, { runtime }) => ({ ok: true, completion: await runtime.complete(command.code, command.cursor) }),
    inspect: async (command, { runtime }) => ({ ok: true, inspection: await runtime.inspect(command.code, command.cursor, command.detail ?? false) }),
    "insert-cell": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "delete-cell": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "move-cell": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "set-source": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "set-kind": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "clear-outputs": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "set-parameters": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "detach-template": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "reattach-template": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "undo-reattach": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "commit-prediction": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    interrupt: (command, { runtime, socketId }) => handled(runtime, command, socketId),
    "set-kernel-spec": (command, { runtime, socketId }) => handled(runtime, command, socketId),
    restart: (command, { runtime, socketId }) => handled(runtime, command, socketId),
    shutdown: (command, { runtime, socketId }) => handled(runtime, command, socketId),
  };

  viewer(notebookId: string, socketId: string, change: "joined" | "left"): void {
    if (change === "joined") this.hub.viewerJoined(notebookId, socketId);
    else this.hub.viewerLeft(notebookId, socketId);
  }

  async notebookOp(notebookId: string, op: NotebookOp): Promise<void> {
    switch (op.op) {
      case "rename":
        await this.hub.rename(notebookId, op.title);
        return;
      case "deleted":
        await this.hub.setDeleted(notebookId, op.deleted);
        return;
      case "shutdown-kernel":
        await this.hub.kernels.shutdown(notebookId, op.reason);
        return;
      case "restart-kernel": {
        const runtime = await this.hub.open(notebookId);
        await runtime.handle({ op: "restart", notebookId }, "console");
        return;
      }
    }
  }

  listKernels(): Promise<RunningKernels> {
    return this.hub.kernels.list();
  }

  agentHolders(): Promise<Map<string, GpuHolder>> {
    return this.hub.agentKernelHolders();
  }

  /** Shuts down the kernels of the workshop's notebooks driven here. */
  workshopEnded(workshopId: string): Promise<void> {
    return this.workshops.endLocalKernels(workshopId);
  }
}

/** One lab server: every notebook is driven here. */
export class LocalDrivers implements NotebookDrivers {
  readonly several = false;

  constructor(private readonly local: LocalDriver) {}

  command<Op extends CommandOp>(notebookId: string, driven: DrivenCommand<Op>): Promise<DriverAnswer<Op>> {
    return this.local.command(notebookId, driven);
  }

  viewer(notebookId: string, socketId: string, change: "joined" | "left"): void {
    this.local.viewer(notebookId, socketId, change);
  }

  notebookOp(notebookId: string, op: NotebookOp): Promise<void> {
    return this.local.notebookOp(notebookId, op);
  }

  listKernels(): Promise<RunningKernels> {
    return this.local.listKernels();
  }

  agentHolders(): Promise<Map<string, GpuHolder>> {
    return this.local.agentHolders();
  }

  workshopEnded(workshopId: string): Promise<void> {
    return this.local.workshopEnded(workshopId);
  }

  async close(): Promise<void> {}
}
