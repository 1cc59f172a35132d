/**
 * People as stored the way Better Auth reads them: a User row, a
 * "credential" Account holding the password hash, and their Sessions.
 * What may change and the words of a refusal are server/auth (accounts.ts,
 * lab-auth.ts); sign-in itself is Better Auth's, over betterAuthAdapter().
 */
import { randomUUID } from "node:crypto";
import { prismaAdapter } from "better-auth/adapters/prisma";
import type { PrismaClient } from "./generated/client";
import { databaseProviderOf } from "./database";

/** A user as the admin's list shows them. */
export interface AccountRow {
  id: string;
  name: string;
  email: string;
  role: string;
  createdAt: Date;
  hasPassword: boolean;
  /** Sessions not expired yet. */
  activeSessions: number;
}

export interface NewPasswordAccount {
  userId: string;
  name: string;
  email: string;
  role: string;
  passwordHash: string;
  /** The user `userId` exists already (the token-mode local user, taken over by the first admin): it is renamed, not created. */
  adopt: boolean;
}

/** A session with who it belongs to now (a changed role counts at once). */
export interface SessionRow {
  expiresAt: Date;
  user: { name: string; role: string; workshopId: string | null; removedAt: Date | null };
}

const CREDENTIAL = "credential";

export class AccountRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Better Auth's own access to the same tables (users, sessions, accounts,
   * verifications). It words some queries per provider (case-insensitive
   * matches, transactions), so it is told which one this client talks to.
   */
  betterAuthAdapter(): ReturnType<typeof prismaAdapter> {
    return prismaAdapter(this.prisma, { provider: databaseProviderOf(this.prisma) });
  }

  async emailTaken(email: string): Promise<boolean> {
    return (await this.prisma.user.findUnique({ where: { email }, select: { id: true } })) !== null;
  }

  async userExists(userId: string): Promise<boolean> {
    return (await this.prisma.user.findUnique({ where: { id: userId } })) !== null;
  }

  /** The user and their password, in one transaction. */
  async createWithPassword(account: NewPasswordAccount): Promise<void> {
    const { userId, name, email, role, passwordHash } = account;
    await this.prisma.$transaction(async (tx) => {
      if (account.adopt) await tx.user.update({ where: { id: userId }, data: { name, email, role: "admin" } });
      else await tx.user.create({ data: { id: userId, name, email, role } });
      await tx.account.create({ data: { id: randomUUID(), accountId: userId, providerId: CREDENTIAL, userId, password: passwordHash } });
    });
  }

  /** Users not removed, oldest first. */
  async activeUserIds(): Promise<string[]> {
    const users = await this.prisma.user.findMany({ where: { removedAt: null }, orderBy: { createdAt: "asc" }, select: { id: true } });
    return users.map((user) => user.id);
  }

  /** A user not removed; null when there is none. */
  activeUser(userId: string): Promise<{ id: string; role: string } | null> {
    return this.prisma.user.findFirst({ where: { id: userId, removedAt: null }, select: { id: true, role: true } });
  }

  /** The user (not removed) with this e-mail address (compared lower-cased); null when there is none. */
  activeUserByEmail(email: string): Promise<{ id: string; role: string } | null> {
    return this.prisma.user.findFirst({ where: { email: email.trim().toLowerCase(), removedAt: null }, select: { id: true, role: true } });
  }

  /** The user's stored e-mail address; throws (Prisma's not-found) when there is no such user. */
  async emailOf(userId: string): Promise<string> {
    const user = await this.prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { email: true } });
    return user.email;
  }

  /** Throws (Prisma's not-found) when there is no such user. */
  async account(userId: string): Promise<AccountRow> {
    const user = await this.prisma.user.findUniqueOrThrow({
      where: { id: userId },
      select: { id: true, name: true, email: true, role: true, createdAt: true, accounts: { where: { providerId: CREDENTIAL }, select: { id: true } }, _count: { select: { sessions: { where: { expiresAt: { gt: new Date() } } } } } },
    });
    return { id: user.id, name: user.name, email: user.email, role: user.role, createdAt: user.createdAt, hasPassword: user.accounts.length > 0, activeSessions: user._count.sessions };
  }

  async setRole(userId: string, role: string): Promise<void> {
    await this.prisma.user.update({ where: { id: userId }, data: { role } });
  }

  /** The id of the user's password account; null: they sign in without one. */
  async credentialOf(userId: string): Promise<string | null> {
    const credential = await this.prisma.account.findFirst({ where: { userId, providerId: CREDENTIAL }, select: { id: true } });
    return credential?.id ?? null;
  }

  /** The new hash, and every session of the user ended with the old password, in one transaction. */
  async replacePassword(userId: string, credentialId: string, passwordHash: string): Promise<void> {
    await this.prisma.$transaction([this.prisma.account.update({ where: { id: credentialId }, data: { password: passwordHash } }), this.prisma.session.deleteMany({ where: { userId } })]);
  }

  /** Sessions and password gone, the user marked removed and their e-mail freed, in one transaction; their notebooks stay. */
  async remove(userId: string): Promise<void> {
    await this.prisma.$transaction([
      this.prisma.session.deleteMany({ where: { userId } }),
      this.prisma.account.deleteMany({ where: { userId } }),
      this.prisma.user.update({ where: { id: userId }, data: { removedAt: new Date(), email: `${userId}.removed@users.invalid` } }),
    ]);
  }

  /** Accounts (of users not removed) that sign in with a password. */
  passwordCount(): Promise<number> {
    return this.prisma.account.count({ where: { providerId: CREDENTIAL, user: { removedAt: null } } });
  }

  adminPasswordCount(): Promise<number> {
    return this.prisma.account.count({ where: { providerId: CREDENTIAL, user: { role: "admin", removedAt: null } } });
  }

  /** Admins (not removed) other than `userId`. */
  otherAdminCount(userId: string): Promise<number> {
    return this.prisma.user.count({ where: { role: "admin", removedAt: null, id: { not: userId } } });
  }

  /** Whether the user exists and is not removed (a session may be made for them). */
  async maySignIn(userId: string): Promise<boolean> {
    const user = await this.prisma.user.findUnique({ where: { id: userId }, select: { removedAt: true } });
    return user !== null && user.removedAt === null;
  }

  /** A workshop participant (no password), in the admission queue from `waitingSince`. */
  async addParticipant(participant: { id: string; name: string; workshopId: string; waitingSince: Date }): Promise<void> {
    const { id, name, workshopId, waitingSince } = participant;
    await this.prisma.user.create({ data: { id, name, email: `${id}@participants.invalid`, role: "participant", workshopId, waitingSince } });
  }

  /** The session and its user as stored now; null when it is gone. */
  session(sessionId: string): Promise<SessionRow | null> {
    return this.prisma.session.findUnique({
      where: { id: sessionId },
      select: { expiresAt: true, user: { select: { name: true, role: true, workshopId: true, removedAt: true } } },
    });
  }
}
