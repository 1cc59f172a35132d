/**
 * Which requests may drive the lab: only its own pages, on its own names.
 *
 * Three checks, all pure functions of the request's headers and the lab's
 * names, so one module decides for every HTTP route and the socket
 * handshake alike:
 * - `Host` must be one of the lab's names. A page on a domain the attacker
 *   controls can make the browser talk to 127.0.0.1 (DNS rebinding), but it
 *   cannot make the browser send the lab's name as `Host`.
 * - `Origin`, when the browser sends one, must be one of the lab's origins.
 *   Another port on the same machine (`http://localhost:3199`) is another
 *   origin, even though it is the same *site*; `Sec-Fetch-Site: cross-site`
 *   is refused outright.
 * - A state-changing request (anything but GET/HEAD/OPTIONS) needs a
 *   same-origin proof: an allowed `Origin`, or no `Origin` and a
 *   `Sec-Fetch-Site` of same-origin/none (or none at all: not a browser).
 *   Its body must be a type a cross-site HTML form cannot send
 *   (`application/json` or `application/x-ipynb+json`), so even a browser
 *   that omitted both headers could not forge it without a CORS preflight,
 *   which the lab never grants.
 *
 * A request without `Origin` and without `Sec-Fetch-Site` comes from a
 * program, not a page (browsers send `Origin` on every WebSocket handshake
 * and every cross-origin or unsafe request): a local program can run code
 * here anyway, so it is not what these checks are for.
 */
import { networkInterfaces, hostname as machineName } from "node:os";

export interface LabNames {
  /** Host names (without port), lower case; IPv6 in brackets. */
  hosts: ReadonlySet<string>;
  /** Full origins (`scheme://host[:port]`) whose pages may drive the lab. */
  origins: ReadonlySet<string>;
}

export type GuardVerdict = { ok: true } | { ok: false; status: 400 | 403 | 415; reason: string };

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const WILDCARD_BINDS = new Set(["0.0.0.0", "::", "[::]"]);
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Body types a cross-site form cannot send; everything the lab accepts is one of these. */
const ACCEPTED_BODY_TYPES = new Set(["application/json", "application/x-ipynb+json"]);

/**
 * The lab's names for a server bound to `bindHost:port`, plus `extraOrigins`
 * (a lab behind a proxy: the public origins, e.g. `https://lab.example.com`).
 */
export function labNames(bindHost: string, port: number, extraOrigins: readonly string[] = []): LabNames {
  const hosts = new Set<string>();
  const bind = bracketIPv6(bindHost.toLowerCase());
  if (WILDCARD_BINDS.has(bindHost)) {
    // Bound to every interface: every address of this machine and its name are the lab's.
    for (const name of [...LOOPBACK_NAMES, machineName().toLowerCase(), ...interfaceAddresses()]) hosts.add(name);
  } else if (LOOPBACK_NAMES.includes(bind) || bind.startsWith("127.")) {
    for (const name of LOOPBACK_NAMES) hosts.add(name);
    hosts.add(bind);
  } else {
    hosts.add(bind);
  }
  const origins = new Set<string>();
  for (const host of hosts) origins.add(`http://${host}:${port}`);
  for (const raw of extraOrigins) {
    const origin = new URL(raw);
    origins.add(origin.origin);
    hosts.add(origin.hostname.toLowerCase());
  }
  return { hosts, origins };
}

export interface RequestHeaders {
  host?: string | undefined;
  origin?: string | undefined;
  "sec-fetch-site"?: string | undefined;
  "content-type"?: string | undefined;
}

/** Every HTTP request: the right Host; for a state-changing one, same-origin proof and a form-proof body type. */
export function checkHttpRequest(method: string | undefined, headers: RequestHeaders, names: LabNames): GuardVerdict {
  const host = checkHost(headers.host, names);
  if (!host.ok) return host;
  // A safe request changes nothing; reading its answer cross-origin is what
  // CORS (never granted) and CORP (security-headers.ts) already deny.
  if (SAFE_METHODS.has((method ?? "GET").toUpperCase())) return { ok: true };
  const origin = checkOrigin(headers, names);
  if (!origin.ok) return origin;
  const type = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (!ACCEPTED_BODY_TYPES.has(type)) {
    return { ok: false, status: 415, reason: `send the body as application/json or application/x-ipynb+json, not ${type || "no content type"}` };
  }
  return { ok: true };
}

/** The socket.io handshake (polling or WebSocket): the right Host and an allowed Origin. */
export function checkSocketHandshake(headers: RequestHeaders, names: LabNames): GuardVerdict {
  const host = checkHost(headers.host, names);
  if (!host.ok) return host;
  return checkOrigin(headers, names);
}

function checkHost(raw: string | undefined, names: LabNames): GuardVerdict {
  if (!raw) return { ok: false, status: 400, reason: "the request has no Host header" };
  const name = hostWithoutPort(raw.trim().toLowerCase());
  if (name !== null && names.hosts.has(name)) return { ok: true };
  return {
    ok: false,
    status: 403,
    reason: `this lab answers only to ${[...names.hosts].join(", ")}, not to ${JSON.stringify(raw.slice(0, 100))}; behind a proxy, list the public origin in MGPULAB_ALLOWED_ORIGINS`,
  };
}

function checkOrigin(headers: RequestHeaders, names: LabNames): GuardVerdict {
  const origin = headers.origin;
  if (origin !== undefined) {
    // "null" (sandboxed frames, file: pages) is never one of the lab's origins.
    if (names.origins.has(origin.toLowerCase())) return { ok: true };
    return { ok: false, status: 403, reason: `pages from ${JSON.stringify(origin.slice(0, 100))} may not drive this lab` };
  }
  const site = headers["sec-fetch-site"];
  if (site === undefined || site === "same-origin" || site === "none") return { ok: true };
  return { ok: false, status: 403, reason: `a ${site} request may not drive this lab` };
}

/** "host:port" → "host"; "[::1]:3000" → "[::1]"; null when malformed. */
export function hostWithoutPort(value: string): string | null {
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end === -1) return null;
    const rest = value.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(0, end + 1);
  }
  const match = /^([^:]+)(?::\d{1,5})?$/.exec(value);
  return match ? match[1]! : null;
}

function bracketIPv6(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((address) => address !== undefined)
    .map((address) => (address.family === "IPv6" ? `[${address.address.toLowerCase()}]` : address.address));
}
