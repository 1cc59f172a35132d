/**
 * The sharing ops (who a notebook is shared with, and at what level): their
 * handlers over the share and account repositories. Separate from the
 * socket edge, which only dispatches to them (socket/lab-handler.ts).
 */
import { CommandError } from "../errors";
import type { ShareView } from "../core/protocol/accounts-model";
import type { LabRepositories } from "../persistence";
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";

export type ShareOp = "list-shares" | "share-notebook";

export function shareHandlers({ repositories }: Pick<LabServices, "repositories">): LabHandlerTable<ShareOp> {
  return {
    "list-shares": async (command) => ({ ok: true, shares: await listShares(repositories, command.notebookId) }),
    "share-notebook": async (command, actor) => {
      const { accounts, shares } = repositories;
      const user = await accounts.activeUserByEmail(command.email);
      // Participants are nobody's to share with: their sessions see their own copies only.
      if (!user || user.role === "participant") throw new CommandError("not-found", `no user with the e-mail ${command.email.trim()}`);
      if (user.id === actor.userId) throw new CommandError("invalid", "this notebook is yours already");
      if (command.access === "none") await shares.remove(command.notebookId, user.id);
      else await shares.set(command.notebookId, user.id, command.access);
      return { ok: true, shares: await listShares(repositories, command.notebookId) };
    },
  };
}

async function listShares(repositories: LabRepositories, notebookId: string): Promise<ShareView[]> {
  const rows = await repositories.shares.list(notebookId);
  return rows.map((row) => ({ userId: row.userId, name: row.name, email: row.email, access: row.access === "run" ? "run" : "read" }));
}
