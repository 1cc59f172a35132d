/** Users as owners of notebooks and runs (accounts and sign-in: server/auth). */
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "./generated/client";
import { InvalidDataError } from "./errors";

export interface UserSummary {
  id: string;
  name: string;
  email: string;
  createdAt: Date;
}

const userSelect = { id: true, name: true, email: true, createdAt: true } as const;

/** The single user of a lab without accounts. */
export const LOCAL_USER = { id: "local", name: "Local user", email: "local@users.invalid" } as const;

export class UserRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async create(input: { name: string; email?: string | null; id?: string }): Promise<UserSummary> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 200) throw new InvalidDataError("a user name has 1–200 characters");
    return this.prisma.user.create({ data: { id: input.id, name, email: input.email ?? `${input.id ?? randomUUID()}@users.invalid` }, select: userSelect });
  }

  find(id: string): Promise<UserSummary | null> {
    return this.prisma.user.findUnique({ where: { id }, select: userSelect });
  }

  /** The user with this id, created with `name` if it does not exist yet (e.g. LOCAL_USER at start: the admin of a token-mode lab). */
  ensure(user: { id: string; name: string } = LOCAL_USER): Promise<UserSummary> {
    return this.prisma.user.upsert({ where: { id: user.id }, create: { id: user.id, name: user.name, email: `${user.id}@users.invalid`, role: user.id === LOCAL_USER.id ? "admin" : "member" }, update: {}, select: userSelect });
  }
}
