/**
 * The admin's users page: the lab's accounts, making one, changing a role,
 * setting a new password for one that signs in with a password, and
 * removing one (asked twice: it ends their sessions at once). Every
 * answer goes through here; a refusal becomes the one message the page shows,
 * in the server's words (a non-admin reads why they may not).
 */
import { ACCOUNT_ROLES, type AccountRole, type Role, type UserView } from "../../../server/core/protocol/accounts-model";
import type { LabOp, LabReply, LabSend } from "../../../server/core/protocol/ops-lab";
import { passwordProblem } from "../../shell/model/auth-client";
import type { LabTransport } from "../../shell/model/lab-client";
import { PolledPage } from "../../shell/model/polling-store";

export interface UsersState {
  status: "loading" | "ready" | "error";
  /** By name. */
  users: readonly UserView[];
  error: string | null;
  /** The user whose "Remove" waits for its confirmation. */
  confirmingRemove: string | null;
  /** The user whose row shows the new-password field. */
  settingPassword: string | null;
  /** The user whose password was just set (the row says so until the next action). */
  passwordSet: string | null;
  /** A command is out: its buttons wait. */
  busy: boolean;
}

export interface NewUser {
  name: string;
  email: string;
  password: string;
  role: AccountRole;
}

/** The roles an admin can pick for this user; null when it cannot change here (a participant comes from a join code). */
export function roleChoices(user: Pick<UserView, "role">): readonly AccountRole[] | null {
  return isAccountRole(user.role) ? ACCOUNT_ROLES : null;
}

export function isAccountRole(role: Role | string): role is AccountRole {
  return (ACCOUNT_ROLES as readonly string[]).includes(role);
}

/** "2 sessions", "no session". */
export function sessionsLabel(count: number): string {
  return count === 0 ? "no session" : count === 1 ? "1 session" : `${count} sessions`;
}

export function sortUsers(users: readonly UserView[]): UserView[] {
  return [...users].sort((a, b) => a.name.localeCompare(b.name) || a.email.localeCompare(b.email));
}

type ListReply = LabReply<"list-users">;

export class UsersController extends PolledPage<UsersState, ListReply> {
  constructor(private readonly transport: LabTransport) {
    super(
      transport,
      { status: "loading", users: [], error: null, confirmingRemove: null, settingPassword: null, passwordSet: null, busy: false },
      { what: "Loading the users", fetch: () => transport.send({ op: "list-users" }), apply: (reply) => ({ users: sortUsers(reply.users) }) },
    );
  }

  /** Makes the account; true when made (the form clears), else the server's reason is shown. */
  async create(input: NewUser): Promise<boolean> {
    const ack = await this.command({ op: "create-user", name: input.name.trim(), email: input.email.trim(), password: input.password, role: input.role }, "Creating the user");
    if (ack === null) return false;
    this.upsert(ack.user);
    return true;
  }

  async setRole(userId: string, role: AccountRole): Promise<boolean> {
    const ack = await this.command({ op: "set-user-role", userId, role }, "Changing the role");
    if (ack === null) return false;
    this.upsert(ack.user);
    return true;
  }

  /** The first click on "Remove": the row asks to confirm. */
  askRemove(userId: string): void {
    this.update({ confirmingRemove: userId, settingPassword: null, passwordSet: null });
  }

  /** "Set password": the row asks for the new one. Only for users who sign in with a password. */
  askSetPassword(userId: string): void {
    this.update({ settingPassword: userId, confirmingRemove: null, passwordSet: null });
  }

  cancelSetPassword(): void {
    if (this.state.settingPassword !== null) this.update({ settingPassword: null });
  }

  /** Sets the password of the user whose row asked; one too short is refused here without asking. */
  async setPassword(password: string): Promise<boolean> {
    const userId = this.state.settingPassword;
    if (userId === null) return false;
    const problem = passwordProblem(password);
    if (problem !== null) {
      this.update({ error: `Setting the password failed: ${problem}` });
      return false;
    }
    const ack = await this.command({ op: "set-user-password", userId, password }, "Setting the password");
    if (ack === null) return false;
    this.upsert(ack.user);
    this.update({ settingPassword: null, passwordSet: userId });
    return true;
  }

  cancelRemove(): void {
    if (this.state.confirmingRemove !== null) this.update({ confirmingRemove: null });
  }

  /** The confirmation: removes the user the row asked about (their sessions end at once). */
  async confirmRemove(): Promise<boolean> {
    const userId = this.state.confirmingRemove;
    if (userId === null) return false;
    this.update({ confirmingRemove: null });
    const ack = await this.command({ op: "remove-user", userId }, "Removing the user");
    if (ack === null) return false;
    this.update({ users: sortUsers(ack.users) });
    return true;
  }


  private upsert(user: UserView): void {
    const others = this.state.users.filter((u) => u.id !== user.id);
    this.update({ users: sortUsers([...others, user]) });
  }

  private async command<Op extends LabOp>(command: LabSend<Op>, what: string): Promise<LabReply<Op> | null> {
    this.update({ busy: true, error: null });
    const ack = await this.transport.send(command);
    this.store.supersede(); // a list asked before this answer is older than it
    this.update({ busy: false });
    if (!ack.ok) {
      this.update({ error: `${what} failed: ${ack.error}` });
      return null;
    }
    return ack;
  }

}

