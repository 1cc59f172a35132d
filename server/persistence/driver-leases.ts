/**
 * Which lab server drives which notebook, when several serve one database:
 * a row per notebook (NotebookDriver) naming the server and how long its
 * lease lasts. The driver renews all its leases at once, every third of the
 * lease; a server that stops renewing (killed, cut off from the database)
 * loses them when they lapse, and any other server may claim the notebook
 * and take its kernel over from the host agent.
 *
 * Every change is one conditional statement, so two servers racing for a
 * lapsed lease cannot both win: the database decides.
 */
import type { PrismaClient } from "./generated/client";
import { isUniqueViolation } from "./errors";

export interface DriverLeaseOptions {
  /** This server's id (random per process start). */
  serverId: string;
  /** How long a lease lasts unless renewed. */
  leaseMs: number;
  clock?: () => number;
}

/** The answer to "who drives this notebook?" after trying to claim it; `from`: the server that drove it before this one (null: none, or this one). */
export type Claim = { mine: true; from: string | null } | { mine: false; serverId: string; leaseUntil: Date };

export class DriverLeases {
  readonly serverId: string;
  readonly leaseMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly prisma: PrismaClient,
    options: DriverLeaseOptions,
  ) {
    this.serverId = options.serverId;
    this.leaseMs = options.leaseMs;
    this.clock = options.clock ?? Date.now;
  }

  private until(): Date {
    return new Date(this.clock() + this.leaseMs);
  }

  /**
   * Takes (or keeps) the notebook's lease unless another server holds a live
   * one; says who drives it. A notebook that does not exist throws (its
   * foreign key), as opening it would.
   */
  async claim(notebookId: string): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const now = new Date(this.clock());
      const holder = await this.prisma.notebookDriver.findUnique({ where: { notebookId }, select: { serverId: true, leaseUntil: true } });
      if (holder && holder.serverId !== this.serverId && holder.leaseUntil.getTime() >= now.getTime()) {
        return { mine: false, serverId: holder.serverId, leaseUntil: holder.leaseUntil };
      }
      const from = holder && holder.serverId !== this.serverId ? holder.serverId : null;
      if (holder) {
        // Only if it is still what was read: a server that claimed it in between wins.
        const taken = await this.prisma.notebookDriver.updateMany({
          where: { notebookId, serverId: holder.serverId, leaseUntil: holder.leaseUntil },
          data: { serverId: this.serverId, leaseUntil: this.until() },
        });
        if (taken.count === 1) return { mine: true, from };
        continue;
      }
      try {
        await this.prisma.notebookDriver.create({ data: { notebookId, serverId: this.serverId, leaseUntil: this.until() }, select: { notebookId: true } });
        return { mine: true, from: null };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // another server created it first: read it on the next turn
      }
    }
    throw new Error(`could not settle which server drives notebook ${notebookId}`);
  }

  /** Who drives the notebook now (a live lease), without claiming it; null when nobody does. */
  async driverOf(notebookId: string): Promise<string | null> {
    const row = await this.prisma.notebookDriver.findUnique({ where: { notebookId }, select: { serverId: true, leaseUntil: true } });
    return row && row.leaseUntil.getTime() >= this.clock() ? row.serverId : null;
  }

  /** Renews every lease this server holds; returns the notebooks it still holds (others took the rest). */
  async renew(): Promise<Set<string>> {
    await this.prisma.notebookDriver.updateMany({ where: { serverId: this.serverId }, data: { leaseUntil: this.until() } });
    const held = await this.prisma.notebookDriver.findMany({ where: { serverId: this.serverId }, select: { notebookId: true } });
    return new Set(held.map((row) => row.notebookId));
  }

  /** Gives one notebook up (its runtime closed here): the next server to need it claims it at once. */
  async release(notebookId: string): Promise<void> {
    await this.prisma.notebookDriver.deleteMany({ where: { notebookId, serverId: this.serverId } });
  }

  /** Gives every lease up (a clean stop): other servers take the kernels over without waiting for a lapse. */
  async releaseAll(): Promise<void> {
    await this.prisma.notebookDriver.deleteMany({ where: { serverId: this.serverId } });
  }

  /** The servers that hold a live lease now, this one included. */
  async liveServers(): Promise<string[]> {
    const rows = await this.prisma.notebookDriver.findMany({
      where: { leaseUntil: { gte: new Date(this.clock()) } },
      select: { serverId: true },
      distinct: ["serverId"],
    });
    return rows.map((row) => row.serverId);
  }

  /** Notebooks with a kernel run still open whose driver's lease lapsed or who have none: a kernel nobody drives. */
  async orphanedNotebooks(): Promise<string[]> {
    const now = new Date(this.clock());
    const runs = await this.prisma.kernelRun.findMany({
      where: { status: "running", notebook: { OR: [{ driver: { is: null } }, { driver: { is: { leaseUntil: { lt: now } } } }] } },
      select: { notebookId: true },
      distinct: ["notebookId"],
    });
    return runs.map((run) => run.notebookId);
  }
}
