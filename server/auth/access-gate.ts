/**
 * The one place where the lab decides whether an actor may touch something:
 * it loads the facts the policy needs (access-policy.ts) and turns a "no"
 * into the error the caller answers with. A hidden notebook, run or
 * execution is "not found", word for word the same as a missing one.
 */
import { CommandError } from "../errors";
import { NotFoundError } from "../persistence";
import type { AccessRepository } from "../persistence/access-repository";
import type { NotebookAccessRow } from "../persistence/access-facts";
import type { WorkshopRepository } from "../persistence/workshop-repository";
import { mayDo, mayDoWithNotebook, mayStopKernel, notebookAccess, type LabAction, type NotebookAccess, type NotebookAction, type NotebookFacts } from "./access-policy";
import type { Actor } from "./roles";

export class AccessGate {
  constructor(
    private readonly stored: AccessRepository,
    private readonly workshops: Pick<WorkshopRepository, "facilitatorOf">,
  ) {}

  /** Throws "forbidden" unless the actor's role allows `action` (no id involved, so nothing to hide). */
  requireLab(actor: Actor, action: LabAction): void {
    if (!mayDo(actor, action)) throw new CommandError("forbidden", `a ${actor.role} may not ${LAB_ACTION_WORDS[action]}`);
  }

  may(actor: Actor, action: LabAction): boolean {
    return mayDo(actor, action);
  }

  /** The actor's access to this notebook; "not-found" when they have none or it does not exist. */
  async requireNotebook(actor: Actor, notebookId: string, action: NotebookAction): Promise<NotebookAccess> {
    const facts = await this.notebookFacts(actor, notebookId);
    if (!facts || !mayDoWithNotebook(actor, action, facts)) throw notFound("notebook", notebookId);
    return notebookAccess(actor, facts);
  }

  async requireKernelStop(actor: Actor, notebookId: string): Promise<void> {
    const facts = await this.notebookFacts(actor, notebookId);
    if (!facts || !mayStopKernel(actor, facts)) throw notFound("notebook", notebookId);
  }

  /**
   * The facilitator's own workshop; "not-found" for anyone else's, word for
   * word as for an id that does not exist (roles that run no workshops are
   * refused before, without an id involved).
   */
  async requireWorkshop(actor: Actor, workshopId: string): Promise<void> {
    this.requireLab(actor, "run-workshops");
    const facilitatorId = await this.workshops.facilitatorOf(workshopId);
    if (facilitatorId === null || facilitatorId !== actor.userId) throw new CommandError("not-found", `workshop ${workshopId} not found`);
  }

  /** The notebook an execution belongs to, when the actor may read it; else "not-found". */
  async requireExecution(actor: Actor, executionId: string): Promise<string> {
    const notebookId = await this.stored.notebookOfExecution(executionId);
    if (notebookId === null) throw notFound("execution", executionId);
    const facts = await this.notebookFacts(actor, notebookId);
    if (!facts || !mayDoWithNotebook(actor, "read", facts)) throw notFound("execution", executionId);
    return notebookId;
  }

  /** Of these notebooks, the ones the actor may do `action` with (lists: kernels, executions, holders). */
  async filterNotebooks(actor: Actor, notebookIds: readonly string[], action: NotebookAction | "stop-kernel"): Promise<Set<string>> {
    const facts = await this.manyFacts(actor, notebookIds);
    const allowed = new Set<string>();
    for (const [id, fact] of facts) {
      if (action === "stop-kernel" ? mayStopKernel(actor, fact) : mayDoWithNotebook(actor, action, fact)) allowed.add(id);
    }
    return allowed;
  }

  /** Every notebook the actor may read, with their access (the notebook list). */
  async readableNotebooks(actor: Actor): Promise<Map<string, Exclude<NotebookAccess, "none">>> {
    const candidates = await this.stored.candidateNotebooks(actor.userId, { shared: actor.role !== "participant", facilitated: actor.role === "facilitator" });
    const facts = await this.manyFacts(actor, candidates);
    const readable = new Map<string, Exclude<NotebookAccess, "none">>();
    for (const [id, fact] of facts) {
      const access = notebookAccess(actor, fact);
      if (access !== "none") readable.set(id, access);
    }
    return readable;
  }

  /** One notebook's facts: read on every socket command, so one prepared statement rather than the list query. */
  async notebookFacts(actor: Actor, notebookId: string): Promise<NotebookFacts | null> {
    const row = await this.stored.notebookFacts(notebookId, actor.userId);
    return row && factsOf(row);
  }

  private async manyFacts(actor: Actor, notebookIds: readonly string[]): Promise<Map<string, NotebookFacts>> {
    if (notebookIds.length === 0) return new Map();
    const rows = await this.stored.manyFacts(notebookIds, actor.userId);
    return new Map([...rows].map(([id, row]) => [id, factsOf(row)]));
  }
}

function factsOf(row: NotebookAccessRow): NotebookFacts {
  return { ownerId: row.ownerId, workshopId: row.workshopId, workshopFacilitatorId: row.workshopFacilitatorId, workshopEnded: row.workshopEnded, sharedWithActor: shareAccess(row.share ?? undefined) };
}

function shareAccess(value: string | undefined): "read" | "run" | null {
  return value === "read" || value === "run" ? value : null;
}

/** Word for word what the database says of a missing one (persistence NotFoundError). */
function notFound(what: "notebook" | "execution", id: string): NotFoundError {
  return new NotFoundError(what, id);
}

const LAB_ACTION_WORDS: Record<LabAction, string> = {
  "list-own": "list notebooks",
  "create-notebook": "create notebooks",
  "list-scenarios": "list scenarios",
  "list-hosts": "see the lab's hosts",
  "check-host": "check a host",
  "list-all-kernels": "manage every kernel",
  "manage-users": "manage users",
  "run-workshops": "run workshops",
  "see-own-workshop": "follow a workshop (only its participants do)",
};
