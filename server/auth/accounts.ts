/**
 * Accounts an admin manages: people with a password (admin, member,
 * facilitator), stored the way Better Auth reads them (User + a
 * "credential" Account holding the argon2id hash), so sign-in is the
 * library's. Participants are made by the workshop join (lab-auth.ts).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { CommandError, describeFieldRule } from "../errors";
import { LOCAL_USER, type PrismaClient } from "../persistence";
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
  constructor(private readonly prisma: PrismaClient) {}

  /** A new account; the first one made where only the token-mode local user existed takes that user over, with its notebooks. */
  async create(input: NewAccount): Promise<UserView> {
    const parsed = newAccountSchema.safeParse(input);
    if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
    const account = parsed.data;
    const passwordHash = await hashPassword(account.password);
    const taken = await this.prisma.user.findUnique({ where: { email: account.email }, select: { id: true } });
    if (taken) throw new CommandError("conflict", `an account with ${account.email} exists`);
    const adoptLocal = account.role === "admin" && (await this.passwordCount()) === 0 && (await this.prisma.user.findUnique({ where: { id: LOCAL_USER.id } })) !== null;
    const userId = adoptLocal ? LOCAL_USER.id : randomUUID();
    await this.prisma.$transaction(async (tx) => {
      if (adoptLocal) await tx.user.update({ where: { id: userId }, data: { name: account.name, email: account.email, role: "admin" } });
      else await tx.user.create({ data: { id: userId, name: account.name, email: account.email, role: account.role } });
      await tx.account.create({ data: { id: randomUUID(), accountId: userId, providerId: "credential", userId, password: passwordHash } });
    });
    return this.view(userId);
  }

  async list(): Promise<UserView[]> {
    const users = await this.prisma.user.findMany({
      where: { removedAt: null },
      orderBy: { createdAt: "asc" },
      select: { id: true },
    });
    return Promise.all(users.map((user) => this.view(user.id)));
  }

  async setRole(userId: string, role: AccountRole): Promise<UserView> {
    const user = await this.activeUser(userId);
    if (user.role === "participant") throw new CommandError("invalid", "a participant belongs to a workshop; their role does not change");
    if (user.role === "admin" && role !== "admin") await this.keepOneAdmin(userId);
    await this.prisma.user.update({ where: { id: userId }, data: { role } });
    return this.view(userId);
  }

  /** A new password set by an admin: the user's sessions end with the old one (the caller disconnects their sockets). */
  async setPassword(userId: string, password: string): Promise<UserView> {
    await this.activeUser(userId);
    const parsed = newAccountSchema.shape.password.safeParse(password);
    if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
    const credential = await this.prisma.account.findFirst({ where: { userId, providerId: "credential" }, select: { id: true } });
    if (!credential) throw new CommandError("invalid", "this user signs in without a password (a participant or the token-mode local user)");
    const passwordHash = await hashPassword(parsed.data);
    await this.prisma.$transaction([
      this.prisma.account.update({ where: { id: credential.id }, data: { password: passwordHash } }),
      this.prisma.session.deleteMany({ where: { userId } }),
    ]);
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
    await this.prisma.$transaction([
      this.prisma.session.deleteMany({ where: { userId } }),
      this.prisma.account.deleteMany({ where: { userId } }),
      this.prisma.user.update({ where: { id: userId }, data: { removedAt: new Date(), email: `${userId}.removed@users.invalid` } }),
    ]);
  }

  /** Accounts that sign in with a password: with none, a loopback lab is the token-mode local lab. */
  passwordCount(): Promise<number> {
    return this.prisma.account.count({ where: { providerId: "credential", user: { removedAt: null } } });
  }

  async hasAdminWithPassword(): Promise<boolean> {
    return (await this.prisma.account.count({ where: { providerId: "credential", user: { role: "admin", removedAt: null } } })) > 0;
  }

  private async view(userId: string): Promise<UserView> {
    const user = await this.prisma.user.findUniqueOrThrow({
      where: { id: userId },
      select: { id: true, name: true, email: true, role: true, createdAt: true, accounts: { where: { providerId: "credential" }, select: { id: true } }, _count: { select: { sessions: { where: { expiresAt: { gt: new Date() } } } } } },
    });
    return {
      id: user.id,
      name: user.name,
      email: user.email,
      role: isRole(user.role) ? user.role : "member",
      createdAt: user.createdAt.toISOString(),
      hasPassword: user.accounts.length > 0,
      signsInWith: user.accounts.length > 0 ? "password" : user.role === "participant" ? "workshop-link" : "this-machine",
      activeSessions: user._count.sessions,
    };
  }

  private async activeUser(userId: string): Promise<{ id: string; role: string }> {
    const user = await this.prisma.user.findFirst({ where: { id: userId, removedAt: null }, select: { id: true, role: true } });
    if (!user) throw new CommandError("not-found", `no user ${userId}`);
    return user;
  }

  private async keepOneAdmin(leaving: string): Promise<void> {
    const others = await this.prisma.user.count({ where: { role: "admin", removedAt: null, id: { not: leaving } } });
    if (others === 0) throw new CommandError("conflict", "the lab needs at least one admin; make someone else admin first");
  }
}
