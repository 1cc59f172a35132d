/**
 * Signed-in test clients. A test lab (LabServer, SocketHarness) signs in
 * its local admin through the real token URL when it starts and remembers
 * the session cookie for its origin here; `connectClient`, `labFetch` and
 * pages from `launchBrowser` then carry it, so tests that are not about
 * accounts drive the lab as its owner would. Tests about accounts sign in
 * others with `signIn`/`joinWorkshop` and pass their cookies explicitly.
 */
import { CLIENT_IP_HEADER } from "../../server/auth";
import { localTokenUrl, mintLocalToken } from "../../server/auth/local-token";
import type { Lab } from "../../server/lab";

const sessions = new Map<string, string>();

/** The `Cookie` header value for the lab at `url`, if one signed in. */
export function sessionCookie(url: string): string | undefined {
  return sessions.get(new URL(url).origin);
}

export function rememberSession(url: string, cookie: string): void {
  sessions.set(new URL(url).origin, cookie);
}

/** Every remembered session, as browser cookies. */
export function rememberedSessions(): Array<{ url: string; cookie: string }> {
  return [...sessions].map(([url, cookie]) => ({ url, cookie }));
}

/** fetch with the lab's remembered session (or `cookie`: another user's; null: none). */
export function labFetch(url: string, init: RequestInit = {}, cookie: string | null = sessionCookie(url) ?? null): Promise<Response> {
  const headers = new Headers(init.headers);
  if (cookie !== null && !headers.has("cookie")) headers.set("cookie", cookie);
  return fetch(url, { ...init, headers });
}

/** Opens a token sign-in URL (as a browser would) and returns the session cookie it set. */
export async function signInWithToken(signInUrl: string): Promise<string> {
  const response = await fetch(signInUrl, { redirect: "manual" });
  return cookieFrom(response, `the token URL answered ${response.status}`);
}

/** Signs in with a password through Better Auth's route; the session cookie. */
export async function signIn(labUrl: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${labUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: new URL(labUrl).origin },
    body: JSON.stringify({ email, password }),
  });
  return cookieFrom(response, `sign-in as ${email} answered ${response.status}: ${await response.clone().text()}`);
}

/** Joins a workshop as a participant; the session cookie. */
export async function joinWorkshop(labUrl: string, code: string, name: string, cookie?: string): Promise<string> {
  const response = await fetch(`${labUrl}/api/auth/workshop/join`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: new URL(labUrl).origin, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ code, name }),
  });
  if (response.ok && cookie && !response.headers.get("set-cookie")) return cookie;
  return cookieFrom(response, `joining ${code} answered ${response.status}: ${await response.clone().text()}`);
}

function cookieFrom(response: Response, failure: string): string {
  const session = response.headers.getSetCookie().find((line) => line.startsWith("mgpulab.session_token="));
  if (!session || response.status >= 400) throw new Error(failure);
  return session.split(";")[0]!;
}

/** The local admin's session cookie from a lab in this process (its token URL, through Better Auth's handler), remembered for `url`. */
export async function signInLocalAdmin(lab: Lab, url: string): Promise<string> {
  const response = await lab.access.auth.handler(new Request(localTokenUrl(url, await mintLocalToken(lab.repositories.verifications)), { headers: { [CLIENT_IP_HEADER]: "127.0.0.1" } }));
  const cookie = cookieFrom(response, `the token URL answered ${response.status}`);
  rememberSession(url, cookie);
  return cookie;
}
