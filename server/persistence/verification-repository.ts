/**
 * One-time secrets kept in Better Auth's Verification table (the loopback
 * token URL, server/auth/local-token.ts): stored by their digest only, each
 * spendable once.
 */
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "./generated/client";

export class VerificationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stores a digest valid until `expiresAt`; the kind's expired ones go first (unexpired ones stay valid). */
  async store(identifier: string, digest: string, expiresAt: Date, now: Date): Promise<void> {
    await this.prisma.verification.deleteMany({ where: { identifier, expiresAt: { lt: now } } });
    await this.prisma.verification.create({ data: { id: randomUUID(), identifier, value: digest, expiresAt } });
  }

  /**
   * Deletes the stored digest and says until when it was valid; null when
   * there was none, or another caller spent it at the same moment (the
   * delete counts: of two tabs opening the same URL at once, one wins).
   */
  async spend(identifier: string, digest: string): Promise<{ expiresAt: Date } | null> {
    const found = await this.prisma.verification.findFirst({ where: { identifier, value: digest } });
    if (!found) return null;
    const { count } = await this.prisma.verification.deleteMany({ where: { id: found.id } });
    return count === 1 ? { expiresAt: found.expiresAt } : null;
  }
}
