/**
 * The account ops (who am I, and the admin's user list): their handlers over
 * the accounts service. Separate from the socket edge, which only
 * dispatches to them (socket/lab-handler.ts).
 */
import { CommandError, describeFieldRule } from "../errors";
import type { LabRequest } from "../core/protocol/ops-lab";
import type { Me } from "../core/protocol/accounts-model";
import type { LabHandlerTable, LabServices } from "../socket/lab-handler";
import { newAccountSchema, type NewAccount } from "./accounts";
import type { Actor } from "./roles";

export type AccountOp = "whoami" | "list-users" | "create-user" | "set-user-role" | "remove-user" | "set-user-password";

export function accountHandlers(services: Pick<LabServices, "access" | "repositories">): LabHandlerTable<AccountOp> {
  const { access } = services;
  const users = async (actor: Actor) => (await access.accounts.list()).map((user) => ({ ...user, you: user.id === actor.userId }));
  return {
    whoami: async (_command, actor) => ({ ok: true, me: await describeMe(actor, services) }),
    "list-users": async (_command, actor) => ({ ok: true, users: await users(actor) }),
    "create-user": async (command) => ({ ok: true, user: await access.accounts.create(parseNewAccount(command)) }),
    "set-user-role": async (command) => {
      const user = await access.accounts.setRole(command.userId, command.role);
      // Open tabs keep working, under the new role from their next event.
      access.notices.roleChanged(command.userId, command.role);
      return { ok: true, user };
    },
    "remove-user": async (command, actor) => {
      await access.accounts.remove(command.userId, actor.userId);
      access.notices.ended({ userId: command.userId }, "removed");
      return { ok: true, users: await users(actor) };
    },
    "set-user-password": async (command) => {
      const user = await access.accounts.setPassword(command.userId, command.password);
      access.notices.ended({ userId: command.userId }, "revoked");
      return { ok: true, user };
    },
  };
}

async function describeMe(actor: Actor, services: Pick<LabServices, "access" | "repositories">): Promise<Me> {
  const email = await services.repositories.accounts.emailOf(actor.userId);
  const gate = services.access.gate;
  return {
    id: actor.userId,
    name: actor.name,
    email: email.endsWith(".invalid") ? null : email,
    role: actor.role,
    workshopId: actor.workshopId,
    sessionExpiresAt: actor.expiresAt.toISOString(),
    can: {
      createNotebooks: gate.may(actor, "create-notebook"),
      manageUsers: gate.may(actor, "manage-users"),
      runWorkshops: gate.may(actor, "run-workshops"),
      seeHosts: gate.may(actor, "list-hosts"),
    },
  };
}

function parseNewAccount(command: LabRequest<"create-user">): NewAccount {
  const parsed = newAccountSchema.safeParse(command);
  // The admin's form: its field's rule, in words ("a password has at least 10 characters").
  if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
  return parsed.data;
}
