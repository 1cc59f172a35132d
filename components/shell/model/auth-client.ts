/**
 * The browser's end of sign-in, sign-out, joining a workshop and changing
 * one's password: JSON POSTs
 * to Better Auth under /api/auth (the lab's request guard refuses any other
 * body type). Each answer becomes one result with the server's own words on
 * refusal; its body is parsed with a schema, never trusted.
 */
import { z } from "zod";
import { readJson } from "./read-json";

export const AUTH_BASE_PATH = "/api/auth";
export const SIGN_IN_PATH = `${AUTH_BASE_PATH}/sign-in/email`;
export const SIGN_OUT_PATH = `${AUTH_BASE_PATH}/sign-out`;
export const JOIN_PATH = `${AUTH_BASE_PATH}/workshop/join`;
export const JOIN_INFO_PATH = `${AUTH_BASE_PATH}/workshop/join-info`;
export const CHANGE_PASSWORD_PATH = `${AUTH_BASE_PATH}/change-password`;

/** The shortest password the server takes (it checks too: server/auth/accounts.ts). */
export const MIN_PASSWORD_CHARS = 10;

export type AuthResult = { ok: true } | { ok: false; error: string };

const refusal = z.object({ message: z.string().min(1) });

/**
 * Where to go after signing in: `next` when it is a path on this site
 * ("/notebooks/x?y"), else "/". "//host" and "/\host" are other sites to a
 * browser, and anything with a scheme is refused too.
 */
export function safeNext(next: string | readonly string[] | null | undefined): string {
  const value = typeof next === "string" ? next : null;
  if (value === null || !value.startsWith("/")) return "/";
  if (value.startsWith("//") || value.startsWith("/\\")) return "/";
  // Control characters (a tab or newline inside "/\t/host") are dropped by URL parsers: refuse them all.
  for (const ch of value) if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) return "/";
  return value;
}

/** "Too many attempts; try again in N s", from the X-Retry-After header (seconds). */
export function tooManyAttempts(retryAfter: string | null): string {
  const seconds = retryAfter === null ? Number.NaN : Number.parseInt(retryAfter, 10);
  return Number.isFinite(seconds) && seconds >= 0 ? `Too many attempts; try again in ${seconds} s` : "Too many attempts; try again later";
}

/** Why the server would refuse `password` as a new password, in its words; null when it would not. */
export function passwordProblem(password: string): string | null {
  return password.length < MIN_PASSWORD_CHARS ? `a password has at least ${MIN_PASSWORD_CHARS} characters` : null;
}

const signedInSchema = z.object({ user: z.object({ role: z.string().optional() }) });

/** Signs in; on success also the role the server gave (where a facilitator lands, see `landingAfterSignIn`). */
export async function signIn(email: string, password: string, fetchImpl: typeof fetch = fetch): Promise<AuthResult & { role?: string }> {
  let role: string | undefined;
  const result = await post(SIGN_IN_PATH, { email: email.trim(), password }, fetchImpl, (body) => {
    role = signedInSchema.safeParse(body).data?.user.role;
  });
  return result.ok && role !== undefined ? { ...result, role } : result;
}

/** Where a sign-in goes: `next`, except that a facilitator coming to the home page lands on their workshops. */
export function landingAfterSignIn(next: string, role: string | undefined): string {
  return next === "/" && role === "facilitator" ? "/workshops" : next;
}

export function joinWorkshop(code: string, name: string, fetchImpl: typeof fetch = fetch): Promise<AuthResult> {
  return post(JOIN_PATH, { code: code.trim(), name: name.trim() }, fetchImpl);
}

const joinInfoSchema = z.object({ title: z.string(), ended: z.boolean(), rejoining: z.boolean() });
export type JoinInfo = z.infer<typeof joinInfoSchema>;

/** The workshop a join code opens (its title, whether it ended), or the server's words for why it opens none. */
export async function workshopInfo(code: string, fetchImpl: typeof fetch = fetch): Promise<{ ok: true; info: JoinInfo } | { ok: false; error: string }> {
  let response: Response;
  try {
    response = await fetchImpl(`${JOIN_INFO_PATH}?code=${encodeURIComponent(code.trim())}`, { credentials: "same-origin" });
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, error: `could not reach the server (${err.message})` };
    throw err;
  }
  if (response.status === 429) return { ok: false, error: tooManyAttempts(response.headers.get("X-Retry-After")) };
  const body = await readJson(response);
  if (response.ok) {
    const info = joinInfoSchema.safeParse(body);
    return info.success ? { ok: true, info: info.data } : { ok: false, error: "the server's answer was not a workshop" };
  }
  const refused = refusal.safeParse(body);
  return { ok: false, error: refused.success ? refused.data.message : `the server answered ${response.status} ${response.statusText}`.trim() };
}

export function signOut(fetchImpl: typeof fetch = fetch): Promise<AuthResult> {
  return post(SIGN_OUT_PATH, {}, fetchImpl);
}

/**
 * Changes the signed-in user's password and signs out their other sessions.
 * The server replaces this tab's session too: a 200 carries the new cookie.
 * A new password the server would refuse for its length is refused here,
 * without asking.
 */
export function changePassword(current: string, next: string, fetchImpl: typeof fetch = fetch): Promise<AuthResult> {
  const problem = passwordProblem(next);
  if (problem !== null) return Promise.resolve({ ok: false, error: problem });
  return post(CHANGE_PASSWORD_PATH, { currentPassword: current, newPassword: next, revokeOtherSessions: true }, fetchImpl);
}

async function post(path: string, body: object, fetchImpl: typeof fetch, onAnswer?: (body: unknown) => void): Promise<AuthResult> {
  let response: Response;
  try {
    response = await fetchImpl(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
  } catch (err) {
    if (err instanceof TypeError) return { ok: false, error: `could not reach the server (${err.message})` };
    throw err;
  }
  if (response.ok) {
    if (onAnswer) onAnswer(await readJson(response));
    return { ok: true };
  }
  if (response.status === 429) return { ok: false, error: tooManyAttempts(response.headers.get("X-Retry-After")) };
  const refused = refusal.safeParse(await readJson(response));
  return { ok: false, error: refused.success ? refused.data.message : `the server answered ${response.status} ${response.statusText}`.trim() };
}

