/**
 * Every socket event and every HTTP route of the lab, with what it needs:
 * the tables below (and /metrics, the operator's, at the end) are the lab's
 * whole authorization surface. The socket edge and the HTTP edge call these
 * and nothing else decides. A new command or route that is not in a table
 * does not compile (sockets) or answers 404 (HTTP).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { LabCommand, NotebookCommand } from "../core/protocol/socket-api";
import type { NotebookAccessLevel } from "../core/protocol/accounts-model";
import type { AccessGate } from "./access-gate";
import type { LabAction, NotebookAction } from "./access-policy";
import type { Actor } from "./roles";
import { hostWithoutPort } from "../http/request-guard";

/** What each notebook command needs of its notebook. */
export const NOTEBOOK_COMMAND_NEEDS: Record<NotebookCommand["op"], NotebookAction> = {
  open: "read",
  presence: "read",
  execute: "run",
  // Completion and inspection read attributes in the kernel: that runs user code, as a cell does.
  complete: "run",
  inspect: "run",
  interrupt: "run",
  restart: "run",
  shutdown: "run",
  "insert-cell": "edit",
  "delete-cell": "edit",
  "move-cell": "edit",
  "set-source": "edit",
  "set-kind": "edit",
  "clear-outputs": "edit",
  "set-parameters": "edit",
  "detach-template": "edit",
  "reattach-template": "edit",
  "undo-reattach": "edit",
  "commit-prediction": "edit",
  "set-kernel-spec": "edit",
};

/** The actor's access to the command's notebook, or the gate's refusal ("not-found"). */
export async function authorizeNotebookCommand(gate: AccessGate, actor: Actor, command: NotebookCommand): Promise<NotebookAccessLevel> {
  const access = await gate.requireNotebook(actor, command.notebookId, NOTEBOOK_COMMAND_NEEDS[command.op]);
  if (access === "none") throw new Error(`the gate let ${command.op} through without access`);
  return access;
}

type LabRule =
  /** Anyone signed in. */
  | { kind: "signed-in" }
  /** A role permission (no id: a refusal may say so). */
  | { kind: "lab"; action: LabAction }
  /** Something done with the command's notebook. */
  | { kind: "notebook"; action: NotebookAction; also?: LabAction }
  /** Stopping the command's notebook's kernel. */
  | { kind: "stop-kernel" }
  /** The command's workshop, which must be the actor's own as its facilitator. */
  | { kind: "workshop" };

/**
 * What each lab command needs. Lists answer only with what the actor may
 * see (the handlers ask the gate for that); a participant's scenario
 * commands are checked against their workshop by the handler.
 */
export const LAB_COMMAND_RULES: Record<LabCommand["op"], LabRule> = {
  whoami: { kind: "signed-in" },
  "list-notebooks": { kind: "lab", action: "list-own" },
  "create-notebook": { kind: "lab", action: "create-notebook" },
  "rename-notebook": { kind: "notebook", action: "manage" },
  "duplicate-notebook": { kind: "notebook", action: "read", also: "create-notebook" },
  "delete-notebook": { kind: "notebook", action: "manage" },
  "restore-notebook": { kind: "notebook", action: "manage" },
  "list-scenarios": { kind: "lab", action: "list-scenarios" },
  "find-scenario-copy": { kind: "lab", action: "list-scenarios" },
  "create-from-scenario": { kind: "lab", action: "list-scenarios" },
  "list-kernels": { kind: "lab", action: "list-own" },
  "shutdown-kernel": { kind: "stop-kernel" },
  // Only a list of every kernel holds refs to notebooks the viewer may not name: only who may list all may use them.
  "shutdown-listed-kernel": { kind: "lab", action: "list-all-kernels" },
  "shutdown-all-kernels": { kind: "lab", action: "list-own" },
  "list-hosts": { kind: "lab", action: "list-hosts" },
  "check-host": { kind: "lab", action: "check-host" },
  "list-users": { kind: "lab", action: "manage-users" },
  "create-user": { kind: "lab", action: "manage-users" },
  "set-user-role": { kind: "lab", action: "manage-users" },
  "remove-user": { kind: "lab", action: "manage-users" },
  "set-user-password": { kind: "lab", action: "manage-users" },
  "list-shares": { kind: "notebook", action: "manage" },
  "share-notebook": { kind: "notebook", action: "manage" },
  "list-workshops": { kind: "lab", action: "run-workshops" },
  "create-workshop": { kind: "lab", action: "run-workshops" },
  "workshop-console": { kind: "workshop" },
  "update-workshop": { kind: "workshop" },
  "workshop-broadcast": { kind: "workshop" },
  "restart-kernel": { kind: "notebook", action: "run" },
  "my-workshop": { kind: "lab", action: "see-own-workshop" },
};

export async function authorizeLabCommand(gate: AccessGate, actor: Actor, command: LabCommand): Promise<void> {
  const rule = LAB_COMMAND_RULES[command.op];
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

/** The lab's own HTTP API (besides Better Auth's sign-in routes, allow-listed in the HTTP edge). */
export type ApiRoute =
  | { name: "import-notebook" }
  | { name: "export-notebook"; notebookId: string }
  | { name: "list-executions" }
  | { name: "execution-metrics"; executionId: string }
  | { name: "workshop-summary"; workshopId: string };

const EXPORT_PATH = /^\/api\/notebooks\/([A-Za-z0-9_-]{1,64})\/export$/;
const METRICS_PATH = /^\/api\/executions\/([A-Za-z0-9_-]{1,64})\/metrics$/;
const WORKSHOP_SUMMARY_PATH = /^\/api\/workshops\/([A-Za-z0-9_-]{1,64})\/summary\.csv$/;

/** Which API route a path is; null: no such route (404). */
export function apiRouteOf(pathname: string): ApiRoute | null {
  if (pathname === "/api/notebooks/import") return { name: "import-notebook" };
  if (pathname === "/api/executions") return { name: "list-executions" };
  const exported = EXPORT_PATH.exec(pathname);
  if (exported) return { name: "export-notebook", notebookId: exported[1]! };
  const metrics = METRICS_PATH.exec(pathname);
  if (metrics) return { name: "execution-metrics", executionId: metrics[1]! };
  const summary = WORKSHOP_SUMMARY_PATH.exec(pathname);
  if (summary) return { name: "workshop-summary", workshopId: summary[1]! };
  return null;
}

/** Throws the gate's refusal; lists (executions) are filtered by their handler through the gate. */
export async function authorizeApiRoute(gate: AccessGate, actor: Actor, route: ApiRoute): Promise<void> {
  switch (route.name) {
    case "import-notebook":
      gate.requireLab(actor, "create-notebook");
      return;
    case "export-notebook":
      await gate.requireNotebook(actor, route.notebookId, "read");
      return;
    case "list-executions":
      gate.requireLab(actor, "list-own");
      return;
    case "execution-metrics":
      await gate.requireExecution(actor, route.executionId);
      return;
    case "workshop-summary":
      await gate.requireWorkshop(actor, route.workshopId);
      return;
  }
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
