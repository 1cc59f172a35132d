/**
 * Several lab servers, one lab: each notebook is driven by one server at a
 * time (a lease in the database, driver-leases.ts); a client's command for
 * a notebook another server drives is forwarded to it over Redis
 * (server-link.ts), and the driver's events reach every server's viewers
 * through socket.io's Redis streams adapter.
 *
 * Servers keep nothing another server needs: a killed server's leases lapse,
 * and the sweep of any other server claims the notebooks whose kernels are
 * still running on their host agents and takes them over from the last
 * stored output (the same takeover as a restart's, in lab.ts). Viewers of
 * the dead server reconnect through the load balancer to a live one and
 * re-open; their journal position tells the new driver what they miss.
 */
import { notebookCommandSchema } from "../core/protocol/socket-api";
import { driverAnswerOf, type DriverAnswer, type NotebookOp as CommandOp } from "../core/protocol/ops-notebook";
import type { RunningKernel, RunningKernels } from "../core/protocol/kernels-model";
import type { GpuHolder } from "../core/protocol/hosts-model";
import type { ClusterRequest } from "../core/protocol/cluster-messages";
import { CommandError, toClientError } from "../errors";
import type { NotebookHub } from "../notebook/notebook-hub";
import { DrivenElsewhere } from "./driven-elsewhere";
import type { DriverLeases } from "../persistence/driver-leases";
import type { DrivenCommand, LocalDriver, NotebookDrivers, NotebookOp } from "./notebook-drivers";
import type { ServerLink } from "./server-link";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

export interface LabClusterOptions {
  hub: NotebookHub;
  local: LocalDriver;
  leases: DriverLeases;
  link: ServerLink;
  /** Takes over the kernel runs of a notebook whose driver is gone (lab.ts: resume from the stored read position, or end as interrupted). */
  takeOver: (notebookId: string) => Promise<void>;
  /** This server's connections in the notebook's room (re-registered as viewers when it becomes the driver). */
  localViewers: (notebookId: string) => string[];
  /** Tells every viewer of the notebook, on any server, to re-open it: its runtime (and journal) starts anew here. */
  resync: (notebookId: string) => void;
  log?: Log;
}

export class LabCluster implements NotebookDrivers {
  readonly several = true;
  private keeper: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private renewing: Promise<void> | null = null;
  /** The notebooks this server held at the last renewal. */
  private held = new Set<string>();
  private lastRenewedAt = Date.now();
  /** Where each notebook was last found driven (saves a lookup per forwarded command); dropped on any failure. */
  private readonly routes = new Map<string, { serverId: string; until: number }>();
  private closed = false;
  /** Notebooks the sweep claimed from a lapsed driver, until their runtime loads here (and their viewers are told). */
  private readonly takenOver = new Set<string>();
  private readonly takingOver = new Map<string, Promise<void>>();

  constructor(private readonly options: LabClusterOptions) {
    options.link.serve((request, from) => this.answer(request, from));
  }

  get serverId(): string {
    return this.options.leases.serverId;
  }

  /** The hub's claim hook: the lease is taken before a runtime loads here, or the load is refused. */
  async claim(notebookId: string): Promise<void> {
    const claim = await this.options.leases.claim(notebookId);
    if (!claim.mine) throw new DrivenElsewhere(notebookId, claim.serverId);
    this.held.add(notebookId);
    for (const socketId of this.options.localViewers(notebookId)) this.options.hub.viewerJoined(notebookId, socketId);
    // Viewers that followed the previous driver's journal would skip this one's first events as already seen.
    const moved = this.takenOver.delete(notebookId) || claim.from !== null;
    if (moved) this.options.resync(notebookId);
  }

  /** Renews the leases every third of their length and sweeps for orphaned kernels every half. */
  start(): void {
    const leaseMs = this.options.leases.leaseMs;
    this.keeper = setInterval(() => void this.renew(), Math.max(200, Math.floor(leaseMs / 3)));
    this.sweeper = setInterval(() => void this.sweep(), Math.max(200, Math.floor(leaseMs / 2)));
    this.keeper.unref();
    this.sweeper.unref();
  }

  /** Claims every notebook whose kernel nobody drives and takes it over. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        for (const notebookId of await this.options.leases.orphanedNotebooks()) {
          if (this.closed) return;
          const claim = await this.options.leases.claim(notebookId);
          if (!claim.mine) continue;
          this.held.add(notebookId);
          this.takenOver.add(notebookId);
          this.routes.delete(notebookId);
          this.options.log?.("info", `lab server ${this.serverId} takes over notebook ${notebookId}: its driver's lease lapsed`);
          // A runtime left open here from before (this server lost the lease, then won it back) is stale.
          if (await this.options.hub.get(notebookId)) await this.options.hub.drop(notebookId);
          await this.takeOverOnce(notebookId);
        }
      } catch (error) {
        this.options.log?.("warning", `sweep for orphaned kernels failed: ${errorMessage(error)}`);
      }
    })().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      try {
        const held = await this.options.leases.renew();
        this.lastRenewedAt = Date.now();
        // Notebooks open here whose lease another server took (this one was cut off too long): let go of them.
        for (const notebookId of this.options.hub.openNotebookIds()) {
          if (!held.has(notebookId)) {
            this.options.log?.("warning", `lab server ${this.serverId} lost notebook ${notebookId} to another server: letting go of its kernel`);
            await this.options.hub.drop(notebookId);
          }
        }
        this.held = held;
      } catch (error) {
        this.options.log?.("warning", `could not renew this server's notebook leases: ${errorMessage(error)}`);
        if (Date.now() - this.lastRenewedAt > this.options.leases.leaseMs) {
          // Past the lease, other servers may have taken these notebooks: driving them on would double their output.
          for (const notebookId of this.options.hub.openNotebookIds()) await this.options.hub.drop(notebookId);
          this.held.clear();
        }
      }
    })().finally(() => (this.renewing = null));
    return this.renewing;
  }

  async command<Op extends CommandOp>(notebookId: string, driven: DrivenCommand<Op>): Promise<DriverAnswer<Op>> {
    try {
      return await this.onDriver(
        notebookId,
        () => this.options.local.command(notebookId, driven),
        async (serverId) => {
          // Another lab server of this lab made it: checked as its op declares it (the document inside is not parsed again).
          const ack = driverAnswerOf<Op>(driven.command.op, await this.options.link.request(serverId, { kind: "notebook-command", notebookId, command: driven.command, socketId: driven.socketId, participant: driven.participant }));
          // The socket joined the room before its driver was known here: the driver counts it as a viewer now (its idle shutdown asks).
          if (driven.command.op === "open" && ack.ok) this.viewer(notebookId, driven.socketId, "joined");
          return ack;
        },
      );
    } catch (error) {
      const { error: message, code } = toClientError(error);
      return { ok: false, error: message, code };
    }
  }

  viewer(notebookId: string, socketId: string, change: "joined" | "left"): void {
    const route = this.routes.get(notebookId);
    if (this.held.has(notebookId) || !route) {
      this.options.local.viewer(notebookId, socketId, change);
      return;
    }
    this.options.link.request(route.serverId, { kind: "viewer", notebookId, socketId, change }).catch(() => {
      // The driver is gone: whoever takes the notebook over counts this server's viewers afresh (claim()).
    });
  }

  async notebookOp(notebookId: string, op: NotebookOp): Promise<void> {
    if (op.op === "restart-kernel") {
      // Needs the runtime: wherever it is driven, or here once claimed.
      await this.onDriver(
        notebookId,
        () => this.options.local.notebookOp(notebookId, op),
        async (serverId) => void (await this.options.link.request(serverId, { kind: "notebook-op", notebookId, op })),
      );
      return;
    }
    const driver = this.held.has(notebookId) ? this.serverId : await this.options.leases.driverOf(notebookId);
    if (driver === null || driver === this.serverId) {
      await this.options.local.notebookOp(notebookId, op);
      return;
    }
    await this.options.link.request(driver, { kind: "notebook-op", notebookId, op });
  }

  async listKernels(): Promise<RunningKernels> {
    const mine = await this.options.local.listKernels();
    const others = await this.fromOtherServers({ kind: "list-kernels" });
    const kernels: RunningKernel[] = [...mine.kernels];
    for (const reply of others) kernels.push(...((reply as RunningKernels | null)?.kernels ?? []));
    return { ...mine, kernels };
  }

  async agentHolders(): Promise<Map<string, GpuHolder>> {
    const holders = await this.options.local.agentHolders();
    for (const reply of await this.fromOtherServers({ kind: "agent-holders" })) {
      for (const [kernel, holder] of (reply as Array<[string, GpuHolder]> | null) ?? []) holders.set(kernel, holder);
    }
    return holders;
  }

  async workshopEnded(workshopId: string): Promise<void> {
    await this.options.local.workshopEnded(workshopId);
    await this.fromOtherServers({ kind: "workshop-ended", workshopId });
  }

  /** Stops renewing and gives the leases up, so other servers take the kernels over at their next sweep. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.keeper) clearInterval(this.keeper);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.sweeping;
    await this.renewing;
    await this.options.leases.releaseAll().catch((error: unknown) => {
      this.options.log?.("warning", `could not give up this server's leases (they lapse by themselves): ${errorMessage(error)}`);
    });
    await this.options.link.close();
  }

  /**
   * Runs `here` when this server drives the notebook (or can claim it), else
   * `there` on its driver. A driver that turns out to be gone is forgotten;
   * until its lease lapses the client is told to try again.
   */
  private async onDriver<T>(notebookId: string, here: () => Promise<T>, there: (serverId: string) => Promise<T>): Promise<T> {
    // A takeover under way has opened the runtime but not yet its kernel and queue: nothing is answered from it before that
    // (a page re-opening on the resync the claim sent would see the queued cells idle, as if their runs had ended).
    await this.takingOver.get(notebookId)?.catch(() => undefined);
    if (this.held.has(notebookId) && (await this.options.hub.get(notebookId))) return here();
    const cached = this.routes.get(notebookId);
    let driver = cached && cached.until > Date.now() ? cached.serverId : null;
    if (driver === null) {
      const claim = await this.options.leases.claim(notebookId);
      if (claim.mine) {
        this.held.add(notebookId);
        if (claim.from !== null) {
          this.takenOver.add(notebookId);
          this.options.log?.("info", `lab server ${this.serverId} takes over notebook ${notebookId} from server ${claim.from}: its lease lapsed`);
        }
        // Its kernel may still run on a host agent for a driver that is gone (killed, or stopped cleanly): take it over before anything else runs here.
        if (!(await this.options.hub.get(notebookId))) await this.takeOverOnce(notebookId);
        return here();
      }
      driver = claim.serverId;
      this.routes.set(notebookId, { serverId: driver, until: Math.min(claim.leaseUntil.getTime(), Date.now() + this.options.leases.leaseMs / 3) });
    }
    try {
      return await there(driver);
    } catch (error) {
      this.routes.delete(notebookId);
      if (error instanceof CommandError && error.code === "unavailable") {
        throw new CommandError(
          "unavailable",
          `${error.message}; the notebook moves to another lab server within ${Math.ceil(this.options.leases.leaseMs / 1000)} s, then try again`,
        );
      }
      throw error;
    }
  }

  /** One takeover per notebook at a time: two commands racing to a notebook whose driver died must not resume its kernel twice. */
  private takeOverOnce(notebookId: string): Promise<void> {
    let running = this.takingOver.get(notebookId);
    if (!running) {
      running = this.options.takeOver(notebookId).finally(() => this.takingOver.delete(notebookId));
      this.takingOver.set(notebookId, running);
    }
    return running;
  }

  /** Asks every other server with live leases; a server that does not answer is left out (its kernels show up once taken over). */
  private async fromOtherServers(request: ClusterRequest): Promise<unknown[]> {
    const servers = (await this.options.leases.liveServers()).filter((serverId) => serverId !== this.serverId);
    const replies = await Promise.allSettled(servers.map((serverId) => this.options.link.request(serverId, request, 3_000)));
    return replies.flatMap((reply) => (reply.status === "fulfilled" ? [reply.value] : []));
  }

  /** A request from another server. */
  private async answer(request: ClusterRequest, from: string): Promise<unknown> {
    switch (request.kind) {
      case "notebook-command": {
        const parsed = notebookCommandSchema.safeParse(request.command);
        if (!parsed.success) throw new CommandError("invalid", `server ${from} forwarded a malformed command`);
        if (!this.held.has(request.notebookId)) {
          // Not (or no longer) ours: claim it if nobody drives it, or say who does.
          await this.claim(request.notebookId).catch((error: unknown) => {
            if (error instanceof DrivenElsewhere) throw new CommandError("unavailable", `notebook ${request.notebookId} moved to lab server ${error.serverId}`);
            throw error;
          });
        }
        return this.options.local.command(request.notebookId, { command: parsed.data, socketId: request.socketId, participant: request.participant });
      }
      case "viewer":
        this.options.local.viewer(request.notebookId, request.socketId, request.change);
        return null;
      case "notebook-op":
        await this.options.local.notebookOp(request.notebookId, request.op);
        return null;
      case "list-kernels":
        return this.options.local.listKernels();
      case "agent-holders":
        return [...(await this.options.local.agentHolders()).entries()];
      case "workshop-ended":
        await this.options.local.workshopEnded(request.workshopId);
        return null;
    }
  }
}


