/**
 * Accounts an admin manages: people with a password (admin, member,
 * facilitator), stored the way Better Auth reads them (User + a
 * "credential" Account holding the argon2id hash), so sign-in is the
 * library's. Participants are made by the workshop join (lab-auth.ts).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { CommandError, describeFieldRule } from "../errors";
import { LOCAL_USER } from "../persistence";
import type { AccountRepository } from "../persistence/account-repository";
import { hashPassword } from "./password-hash";
import type { UserView } from "../core/protocol/accounts-model";
import { ACCOUNT_ROLES, isRole, type AccountRole } from "./roles";

export const MIN_PASSWORD_CHARS = 10;
export const MAX_PASSWORD_CHARS = 128;

export const newAccountSchema = z.object({
  name: z.string().trim().min(1, "a name is needed").max(200),
  email: z.string().trim().toLowerCase().pipe(z.email("an e-mail address like ada@example.com")),
  password: z.string().min(MIN_PASSWORD_CHARS, `a password has at least ${MIN_PASSWORD_CHARS} characters`).max(MAX_PASSWORD_CHARS),
  role: z.enum(ACCOUNT_ROLES),
});
export type NewAccount = z.infer<typeof newAccountSchema>;

export class Accounts {
  constructor(private readonly stored: AccountRepository) {}

  /** A new account; the first one made where only the token-mode local user existed takes that user over, with its notebooks. */
  async create(input: NewAccount): Promise<UserView> {
    const parsed = newAccountSchema.safeParse(input);
    if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
    const account = parsed.data;
    const passwordHash = await hashPassword(account.password);
    if (await this.stored.emailTaken(account.email)) throw new CommandError("conflict", `an account with ${account.email} exists`);
    const adoptLocal = account.role === "admin" && (await this.passwordCount()) === 0 && (await this.stored.userExists(LOCAL_USER.id));
    const userId = adoptLocal ? LOCAL_USER.id : randomUUID();
    await this.stored.createWithPassword({ userId, name: account.name, email: account.email, role: account.role, passwordHash, adopt: adoptLocal });
    return this.view(userId);
  }

  async list(): Promise<UserView[]> {
    const userIds = await this.stored.activeUserIds();
    return Promise.all(userIds.map((userId) => this.view(userId)));
  }

  async setRole(userId: string, role: AccountRole): Promise<UserView> {
    const user = await this.activeUser(userId);
    if (user.role === "participant") throw new CommandError("invalid", "a participant belongs to a workshop; their role does not change");
    if (user.role === "admin" && role !== "admin") await this.keepOneAdmin(userId);
    await this.stored.setRole(userId, role);
    return this.view(userId);
  }

  /** A new password set by an admin: the user's sessions end with the old one (the caller disconnects their sockets). */
  async setPassword(userId: string, password: string): Promise<UserView> {
    await this.activeUser(userId);
    const parsed = newAccountSchema.shape.password.safeParse(password);
    if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
    const credential = await this.stored.credentialOf(userId);
    if (credential === null) throw new CommandError("invalid", "this user signs in without a password (a participant or the token-mode local user)");
    const passwordHash = await hashPassword(parsed.data);
    await this.stored.replacePassword(userId, credential, passwordHash);
    return this.view(userId);
  }

  /**
   * Removes a user: their sessions and password go at once (the caller
   * disconnects their sockets); their notebooks stay, owned by nobody who can
   * sign in. Their e-mail is freed for a new account.
   */
  async remove(userId: string, by: string): Promise<void> {
    const user = await this.activeUser(userId);
    if (userId === by) throw new CommandError("invalid", "you cannot remove yourself; another admin can");
    if (user.role === "admin") await this.keepOneAdmin(userId);
    await this.stored.remove(userId);
  }

  /** Accounts that sign in with a password: with none, a loopback lab is the token-mode local lab. */
  passwordCount(): Promise<number> {
    return this.stored.passwordCount();
  }

  async hasAdminWithPassword(): Promise<boolean> {
    return (await this.stored.adminPasswordCount()) > 0;
  }

  private async view(userId: string): Promise<UserView> {
    const user = await this.stored.account(userId);
    return {
      id: user.id,
      name: user.name,
      email: user.email,
      role: isRole(user.role) ? user.role : "member",
      createdAt: user.createdAt.toISOString(),
      hasPassword: user.hasPassword,
      signsInWith: user.hasPassword ? "password" : user.role === "participant" ? "workshop-link" : "this-machine",
      activeSessions: user.activeSessions,
    };
  }

  private async activeUser(userId: string): Promise<{ id: string; role: string }> {
    const user = await this.stored.activeUser(userId);
    if (!user) throw new CommandError("not-found", `no user ${userId}`);
    return user;
  }

  private async keepOneAdmin(leaving: string): Promise<void> {
    const others = await this.stored.otherAdminCount(leaving);
    if (others === 0) throw new CommandError("conflict", "the lab needs at least one admin; make someone else admin first");
  }
}
