/**
 * The secret that signs session cookies: MGPULAB_AUTH_SECRET, or one made
 * on first start and kept in the data directory, readable by the lab's user
 * only. Never sent to a browser.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

export const AUTH_SECRET_FILE = "auth-secret";

export function loadAuthSecret(dataDir: string, fromEnv: string | undefined): string {
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < 32) throw new Error("MGPULAB_AUTH_SECRET has fewer than 32 characters; use e.g. `openssl rand -base64 32`");
    return fromEnv;
  }
  const file = path.join(dataDir, AUTH_SECRET_FILE);
  if (existsSync(file)) {
    // Someone else able to read it could forge any session.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    const secret = readFileSync(file, "utf8").trim();
    if (secret.length >= 32) return secret;
  }
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
