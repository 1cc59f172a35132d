/**
 * Security headers on every response the lab sends: a Content-Security-Policy
 * that allows only what Next.js and the locally served Monaco need, plus
 * framing, sniffing, referrer and cross-origin isolation headers.
 *
 * Next.js's App Router writes inline bootstrap scripts (`self.__next_f.push`)
 * and then adds script elements at run time, so the only script policy that
 * fits it is a fresh nonce per request with 'strict-dynamic'. Next reads the
 * nonce from the request's own `content-security-policy` header and puts it on
 * every script it renders; that is why `applySecurityHeaders` sets the policy
 * on the request as well as on the response. Pages therefore render per
 * request (app/layout.tsx opts out of static prerendering).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export interface PolicyOptions {
  /** `next dev`: React Refresh evaluates code and HMR talks over its own WebSocket. */
  dev: boolean;
}

/** The policy for one response. Each source is there for a named reason. */
export function contentSecurityPolicy(nonce: string, { dev }: PolicyOptions): string {
  const directives: Array<[string, string[]]> = [
    // Anything not named below: only this origin.
    ["default-src", ["'self'"]],
    // Next's inline bootstrap carries the nonce; chunks it loads are trusted through
    // 'strict-dynamic'. 'self' is the fallback for browsers without 'strict-dynamic'.
    ["script-src", ["'self'", `'nonce-${nonce}'`, "'strict-dynamic'", ...(dev ? ["'unsafe-eval'"] : [])]],
    // Monaco inserts <style> elements at run time and React/recharts set style
    // attributes; styles cannot run code, so inline styles are allowed.
    ["style-src", ["'self'", "'unsafe-inline'"]],
    // Cell outputs are PNG/JPEG/SVG data: URIs; chart PNG export draws a blob: URL.
    ["img-src", ["'self'", "data:", "blob:"]],
    // Monaco's codicon font is a bundled file of this origin.
    ["font-src", ["'self'"]],
    // socket.io (polling and WebSocket) and the JSON routes: this origin only.
    // CSP3 lets 'self' match ws:/wss: of the same host; dev adds HMR's socket.
    ["connect-src", ["'self'", ...(dev ? ["ws:"] : [])]],
    // Monaco's editor worker is a chunk served by this origin (components/notebook/monaco-setup.ts).
    ["worker-src", ["'self'"]],
    // The lab is never framed (clickjacking a "Run" button), embeds no frames, no plugins.
    ["frame-ancestors", ["'none'"]],
    ["frame-src", ["'none'"]],
    ["object-src", ["'none'"]],
    // A <base> tag injected into an output could re-point relative script URLs.
    ["base-uri", ["'none'"]],
    ["form-action", ["'self'"]],
  ];
  return directives.map(([name, sources]) => `${name} ${sources.join(" ")}`).join("; ");
}

/** The headers that go with every response, whatever serves it. */
export const STATIC_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // Older browsers that ignore frame-ancestors.
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  // Notebook ids in URLs stay inside the lab.
  "Referrer-Policy": "same-origin",
  // No other origin may load the lab's responses as images, scripts or JSON (no-cors reads).
  "Cross-Origin-Resource-Policy": "same-origin",
  // A window the lab opens (or that opens the lab) gets no handle on it.
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

/** Sets the headers on `res` and hands Next the nonce through the request's CSP header. */
export function applySecurityHeaders(req: IncomingMessage, res: ServerResponse, options: PolicyOptions): void {
  const nonce = randomBytes(18).toString("base64");
  const policy = contentSecurityPolicy(nonce, options);
  // Overwrites whatever the client sent: only the server chooses the nonce.
  req.headers["content-security-policy"] = policy;
  delete req.headers["content-security-policy-report-only"];
  res.setHeader("Content-Security-Policy", policy);
  for (const [name, value] of Object.entries(STATIC_SECURITY_HEADERS)) res.setHeader(name, value);
}
