/**
 * Passwords are stored as argon2id (RFC 9106) through @node-rs/argon2, the
 * memory-hard hash OWASP recommends first. Its defaults (19 MiB, 2 passes,
 * 1 lane) are OWASP's minimum; Better Auth's own default is scrypt.
 */
import { hash, verify } from "@node-rs/argon2";

/** `Algorithm.Argon2id` from @node-rs/argon2 (a const enum: not importable under isolatedModules). */
const ARGON2ID = 2;

export const PASSWORD_HASH = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH);
}

/** False for a wrong password and for a stored value that is no argon2 hash at all. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
