/**
 * Every socket event and every HTTP route of the lab, with what it needs:
 * the op tables' `access` (server/core/protocol/ops-notebook.ts, ops-lab.ts),
 * the HTTP routes' (routes-http.ts) and /metrics, the operator's, at the end are the lab's
 * whole authorization surface. The socket edge and the HTTP edge call these
 * and nothing else decides. A new op without an access need does not compile
 * (tests/types/op-table.types.ts); a route not in routes-http.ts answers 404.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { LabCommand, NotebookCommand } from "../core/protocol/socket-api";
import { NOTEBOOK_OPS } from "../core/protocol/ops-notebook";
import { LAB_OPS } from "../core/protocol/ops-lab";
import type { LabRule } from "../core/protocol/access-needs";
import { routeRuleOf, type ApiRoute, type RouteRule } from "../core/protocol/routes-http";
import type { NotebookAccessLevel } from "../core/protocol/accounts-model";
import type { AccessGate } from "./access-gate";
import type { Actor } from "./roles";
import { hostWithoutPort } from "../http/request-guard";

/** The actor's access to the command's notebook, or the gate's refusal ("not-found"). */
export async function authorizeNotebookCommand(gate: AccessGate, actor: Actor, command: NotebookCommand): Promise<NotebookAccessLevel> {
  const access = await gate.requireNotebook(actor, command.notebookId, NOTEBOOK_OPS[command.op].access);
  if (access === "none") throw new Error(`the gate let ${command.op} through without access`);
  return access;
}

export async function authorizeLabCommand(gate: AccessGate, actor: Actor, command: LabCommand): Promise<void> {
  const rule: LabRule = LAB_OPS[command.op].access;
  switch (rule.kind) {
    case "signed-in":
      return;
    case "lab":
      gate.requireLab(actor, rule.action);
      return;
    case "notebook":
      await gate.requireNotebook(actor, notebookIdOf(command), rule.action);
      if (rule.also) gate.requireLab(actor, rule.also);
      return;
    case "stop-kernel":
      await gate.requireKernelStop(actor, notebookIdOf(command));
      return;
    case "workshop":
      await gate.requireWorkshop(actor, workshopIdOf(command));
      return;
  }
}

function workshopIdOf(command: LabCommand): string {
  if (!("workshopId" in command)) throw new Error(`lab command ${command.op} has a workshop rule but no workshopId`);
  return command.workshopId;
}

function notebookIdOf(command: LabCommand): string {
  if (!("notebookId" in command)) throw new Error(`lab command ${command.op} has a notebook rule but no notebookId`);
  return command.notebookId;
}

/** Throws the gate's refusal; lists (executions) are filtered by their handler through the gate. */
export async function authorizeApiRoute(gate: AccessGate, actor: Actor, route: ApiRoute): Promise<void> {
  const rule: RouteRule = routeRuleOf(route);
  switch (rule.kind) {
    case "lab":
      gate.requireLab(actor, rule.action);
      return;
    case "notebook":
      if (!("notebookId" in route)) throw ruleWithoutId(route, "notebookId");
      await gate.requireNotebook(actor, route.notebookId, rule.action);
      return;
    case "execution":
      if (!("executionId" in route)) throw ruleWithoutId(route, "executionId");
      await gate.requireExecution(actor, route.executionId);
      return;
    case "workshop":
      if (!("workshopId" in route)) throw ruleWithoutId(route, "workshopId");
      await gate.requireWorkshop(actor, route.workshopId);
      return;
  }
}

/** A route table mistake (an id rule on a path without that id): refused, never let through. */
function ruleWithoutId(route: ApiRoute, param: string): Error {
  return new Error(`route ${route.name} has a ${param} rule but its path carries no ${param}`);
}

/**
 * /metrics, the operator's Prometheus endpoint: no session (a scraper has
 * none). A scraper on this machine, talking to the lab directly, may always
 * read it; from anywhere else (another machine, or through a proxy) only
 * with the bearer token MGPULAB_METRICS_TOKEN, and without one configured
 * it is off (404). A page never may: a browser's cross-origin or cross-site
 * request says so (Origin, Sec-Fetch-Site), and a scraper sends neither.
 */
export interface MetricsRequest {
  /** The connection's address. */
  peerAddress: string | undefined;
  /** The Host header: a scrape on this machine names the loopback; a proxy passes the public name. */
  host: string | undefined;
  /** A proxy's forwarding headers were sent (Forwarded, X-Forwarded-For, X-Real-IP): the client is elsewhere. */
  forwarded: boolean;
  origin: string | undefined;
  secFetchSite: string | undefined;
  authorization: string | undefined;
}

export type MetricsVerdict = { ok: true } | { ok: false; code: "not-found" | "unauthorized" | "forbidden"; reason: string };

const FORWARDING_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"];

/** The facts the rule reads, from a Node request. */
export function metricsRequestOf(req: { socket: { remoteAddress?: string | undefined }; headers: Record<string, string | string[] | undefined> }): MetricsRequest {
  const header = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
  return {
    peerAddress: req.socket.remoteAddress,
    host: header("host"),
    forwarded: FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined),
    origin: header("origin"),
    secFetchSite: header("sec-fetch-site"),
    authorization: header("authorization"),
  };
}

export function authorizeMetrics(request: MetricsRequest, token: string | null): MetricsVerdict {
  if (request.origin !== undefined || (request.secFetchSite !== undefined && request.secFetchSite !== "none")) {
    return { ok: false, code: "forbidden", reason: "/metrics is for a metrics scraper, not for pages" };
  }
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? "")?.[1];
  if (bearer !== undefined && token !== null) {
    return sameSecret(bearer, token) ? { ok: true } : { ok: false, code: "unauthorized", reason: "wrong metrics token" };
  }
  if (isDirectLoopback(request)) return { ok: true };
  if (token !== null) return { ok: false, code: "unauthorized", reason: "send Authorization: Bearer <MGPULAB_METRICS_TOKEN>" };
  return { ok: false, code: "not-found", reason: "no route /metrics: it answers scrapers on this machine only, unless MGPULAB_METRICS_TOKEN is set" };
}

/** On this machine and not through a proxy: a loopback peer that names the loopback and forwards for nobody. */
function isDirectLoopback(request: MetricsRequest): boolean {
  const peer = (request.peerAddress ?? "").toLowerCase().replace(/^::ffff:/, "");
  const peerLoopback = peer === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(peer);
  const name = hostWithoutPort((request.host ?? "").trim().toLowerCase());
  const hostLoopback = name === "localhost" || name === "[::1]" || (name !== null && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name));
  return peerLoopback && hostLoopback && !request.forwarded;
}

/** Compared in constant time (through fixed-length digests, so the length does not leak either). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
