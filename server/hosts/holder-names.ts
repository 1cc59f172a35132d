/**
 * Names the kernels that hold or wait for GPUs, for one viewer: the person
 * whose notebook it is, always (a held GPU is everyone's business), and the
 * notebook's title only where the viewer may read it (README "Accounts and
 * roles": lists show only what the asker may read). The hosts page names
 * them for whoever looks; a notebook's kernel status (its queue, a refusal)
 * is seen by all its viewers and is named for the notebook's owner.
 */
import type { AccessGate } from "../auth/access-gate";
import type { Actor } from "../auth";
import { isRole } from "../auth/roles";
import type { GpuHolder, HolderName } from "../core/protocol/hosts-model";
import type { AccessRepository } from "../persistence/access-repository";

export interface HolderNamingServices {
  /** Which notebook each agent kernel of this lab belongs to (running or queued), over every lab server. */
  holders(): Promise<Map<string, GpuHolder>>;
  /** Owners of notebooks, by name. */
  owners: Pick<AccessRepository, "ownerNames" | "ownerOf">;
  gate: AccessGate;
}

export class HolderNaming {
  constructor(private readonly services: HolderNamingServices) {}

  /** Every agent kernel of this lab, named for `actor`. */
  async forActor(actor: Actor): Promise<Map<string, HolderName>> {
    const holders = await this.services.holders();
    const notebookIds = [...new Set([...holders.values()].map((holder) => holder.notebookId))];
    const [readable, owners] = await Promise.all([this.services.gate.filterNotebooks(actor, notebookIds, "read"), this.ownerNames(notebookIds)]);
    const named = new Map<string, HolderName>();
    for (const [kernel, holder] of holders) {
      const mayRead = readable.has(holder.notebookId);
      named.set(kernel, {
        owner: owners.get(holder.notebookId) ?? "another user",
        notebookId: mayRead ? holder.notebookId : null,
        title: mayRead ? holder.title : null,
      });
    }
    return named;
  }

  /**
   * Named as the notebook's owner may see them (everyone who views the
   * notebook sees the same status); without a notebook, by person only.
   */
  async forNotebook(notebookId: string | null): Promise<Map<string, HolderName>> {
    const found = notebookId === null ? null : await this.services.owners.ownerOf(notebookId);
    if (!found || !isRole(found.role)) {
      const holders = await this.services.holders();
      const owners = await this.ownerNames([...new Set([...holders.values()].map((holder) => holder.notebookId))]);
      return new Map([...holders].map(([kernel, holder]) => [kernel, { owner: owners.get(holder.notebookId) ?? "another user", notebookId: null, title: null }]));
    }
    // The owner as the access policy sees a person: no session is involved, only who they are.
    const owner: Actor = { userId: found.id, name: found.name, role: found.role, workshopId: found.workshopId, sessionId: "", expiresAt: new Date(0) };
    return this.forActor(owner);
  }

  private async ownerNames(notebookIds: string[]): Promise<Map<string, string>> {
    if (notebookIds.length === 0) return new Map();
    return this.services.owners.ownerNames(notebookIds);
  }
}
