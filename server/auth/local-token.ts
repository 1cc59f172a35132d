/**
 * Jupyter's convention for a lab on loopback: the server prints a URL with a
 * one-time token; opening it signs that browser in as the local admin.
 * Only the token's SHA-256 is stored (Better Auth's Verification table), so
 * the database alone signs nobody in; a used token is deleted.
 */
import { createHash, randomBytes } from "node:crypto";
import type { VerificationRepository } from "../persistence/verification-repository";

export const LOCAL_TOKEN_PATH = "/api/auth/local-token";
const IDENTIFIER = "mgpulab:local-token";
const LIFETIME_MS = 24 * 3600_000;

/** A fresh token (stored hashed), valid once for a day. */
export async function mintLocalToken(verifications: VerificationRepository, now = new Date()): Promise<string> {
  const token = randomBytes(24).toString("base64url");
  // Expired ones go; unexpired ones stay valid (a tab may still be opening the last printed URL).
  await verifications.store(IDENTIFIER, digest(token), new Date(now.getTime() + LIFETIME_MS), now);
  return token;
}

/** True once per minted token, while it is unexpired; the token is spent either way. */
export async function consumeLocalToken(verifications: VerificationRepository, token: string, now = new Date()): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{16,128}$/.test(token)) return false;
  // Of two tabs opening the same URL at once, one wins.
  const spent = await verifications.spend(IDENTIFIER, digest(token));
  return spent !== null && spent.expiresAt > now;
}

export function localTokenUrl(base: string, token: string): string {
  return `${base}${LOCAL_TOKEN_PATH}?token=${token}`;
}

function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
