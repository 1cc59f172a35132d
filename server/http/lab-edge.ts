/**
 * The lab's HTTP edge: every request passes here, in this order.
 *
 * 1. Security headers, and the request guard (only the lab's own pages may
 *    drive it: request-guard.ts).
 * 2. The connection's address becomes the rate limits' key (a client's own
 *    forwarding headers are not trusted).
 * 3. /metrics, the operator's Prometheus endpoint: no session; who may
 *    scrape it is authorize.ts's rule (this machine, or the bearer token).
 * 4. Better Auth's routes, allow-listed: sign-in, sign-out, the session,
 *    the loopback token URL and the workshop join. Nothing else of the
 *    library (no open sign-up, no admin endpoints) is reachable.
 * 5. The session. Without one: the public pages (sign-in, join) and their
 *    assets; API routes answer 401; other pages redirect to sign-in — or,
 *    on a loopback lab without accounts, a page saying where the sign-in
 *    URL is, and nothing else.
 * 6. The lab's API routes, each authorised through server/auth/authorize.ts;
 *    an unknown API path is 404. Pages go to Next, and get their data over
 *    the socket, which is authorised the same way.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { toNodeHandler } from "better-auth/node";
import { actorOf, AUTH_BASE_PATH, CLIENT_IP_HEADER, type Actor } from "../auth";
import { authorizeApiRoute, authorizeMetrics, metricsRequestOf } from "../auth/authorize";
import { apiRouteOf, type ApiRoute, type HttpRouteName } from "../core/protocol/routes-http";
import { LOCAL_TOKEN_PATH } from "../auth/local-token";
import type { Lab } from "../lab";
import { serveWorkshopSummary } from "./workshop-routes";
import { handleExecutionRoutes } from "./execution-routes";
import { handleNotebookFiles } from "./notebook-files";
import { refuse, replyError, sendError } from "./json-reply";
import { checkHttpRequest, type LabNames } from "./request-guard";
import { applySecurityHeaders } from "./security-headers";
import { signInHelpPage } from "./sign-in-help";
import { executionChartSvg } from "./execution-routes";

/** Better Auth routes a browser may reach (relative to AUTH_BASE_PATH). */
const AUTH_ROUTES = new Set(["/sign-in/email", "/sign-out", "/get-session", "/change-password", "/workshop/join", "/workshop/join-info", LOCAL_TOKEN_PATH.slice(AUTH_BASE_PATH.length)]);
/** Pages and files served without a session when the lab has accounts. */
const PUBLIC_PAGES = [/^\/login\/?$/, /^\/join\/[A-Za-z0-9]{1,64}\/?$/];
const PUBLIC_FILES = [/^\/_next\/static\//, /^\/monaco\//, /^\/icon\.svg$/, /^\/favicon\.ico$/];

export interface EdgeOptions {
  lab: Lab;
  /** The lab's names (known once listening). */
  names: () => LabNames;
  dev: boolean;
  /** Bound to loopback: the token URL works, and without accounts it is the only way in. */
  loopback: boolean;
  /** Next.js for pages and their assets. */
  pages: (req: IncomingMessage, res: ServerResponse) => void;
  hostIds?: readonly string[];
  onError: (error: unknown, what: string) => void;
  onRefused: (req: IncomingMessage, reason: string) => void;
  /** The operator's metrics (server/metrics); unset: /metrics is 404. */
  metrics?: { render(): Promise<string>; readonly contentType: string };
  /** The bearer token that opens /metrics to scrapers elsewhere (MGPULAB_METRICS_TOKEN). */
  metricsToken?: string | null;
}

/** Where Prometheus scrapes (its default path). */
export const METRICS_PATH = "/metrics";

export function createLabEdge(options: EdgeOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { lab } = options;
  const authHandler = toNodeHandler(lab.access.auth);
  return (req, res) => {
    applySecurityHeaders(req, res, { dev: options.dev });
    const verdict = checkHttpRequest(req.method, req.headers, options.names());
    if (!verdict.ok) {
      options.onRefused(req, verdict.reason);
      refuse(res, verdict);
      return;
    }
    req.headers[CLIENT_IP_HEADER] = req.socket.remoteAddress ?? "unknown";
    const url = new URL(req.url ?? "/", "http://lab.invalid");
    void route(req, res, url, options, authHandler).catch((error: unknown) => replyError(res, error, (err) => options.onError(err, `${req.method ?? ""} ${url.pathname}`), "answer"));
  };
}

async function route(req: IncomingMessage, res: ServerResponse, url: URL, options: EdgeOptions, authHandler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<void> {
  const { lab } = options;
  const path = url.pathname;
  if (path === METRICS_PATH && options.metrics) return serveMetrics(req, res, options.metrics, options);
  if (path.startsWith(`${AUTH_BASE_PATH}/`)) {
    const sub = path.slice(AUTH_BASE_PATH.length);
    if (!AUTH_ROUTES.has(sub) || (path === LOCAL_TOKEN_PATH && !options.loopback)) return void sendError(res, "not-found", `no route ${path}`);
    if (sub === "/sign-out" || sub === "/change-password") await endSocketsAfter(sub, req, res, options);
    return authHandler(req, res);
  }
  const actor = await actorOf(lab.access.auth, req.headers);
  if (!actor) return anonymous(req, res, url, options);
  if (path.startsWith("/api/")) {
    const api = apiRouteOf(path);
    if (!api) return void sendError(res, "not-found", `no route ${path}`);
    await authorizeApiRoute(lab.access.gate, actor, api);
    return serveApi(req, res, api, actor, options);
  }
  if (PUBLIC_PAGES[0]!.test(path)) return redirect(res, "/");
  options.pages(req, res);
}

/** Without a session: public pages and assets, 401 for the API, and sign-in for everything else. */
async function anonymous(req: IncomingMessage, res: ServerResponse, url: URL, options: EdgeOptions): Promise<void> {
  const path = url.pathname;
  const tokenOnly = options.loopback && (await options.lab.access.accounts.passwordCount()) === 0;
  if (tokenOnly) {
    // A local lab without accounts: nothing but where to find the URL.
    if (path.startsWith("/api/")) return void sendError(res, "unauthorized", "open the sign-in URL the lab printed when it started");
    // The address this lab is reached at (never a fixed port): the Host was checked against the lab's names.
    return void signInHelpPage(res, { spent: url.searchParams.get("link") === "spent", origin: `http://${req.headers.host ?? "127.0.0.1"}` });
  }
  if (PUBLIC_PAGES.some((page) => page.test(path)) || PUBLIC_FILES.some((file) => file.test(path))) return options.pages(req, res);
  if (path.startsWith("/api/")) return void sendError(res, "unauthorized", "sign in first");
  redirect(res, `/login?next=${encodeURIComponent(`${path}${url.search}`)}`);
}

/** What an API handler works with: the request's actor, and where its failures are reported. */
interface ApiContext {
  actor: Actor;
  options: EdgeOptions;
  onError: (error: unknown) => void;
}

type ApiHandler<Name extends HttpRouteName> = (req: IncomingMessage, res: ServerResponse, route: Extract<ApiRoute, { name: Name }>, context: ApiContext) => void;

/** Each route of the table (core/protocol/routes-http.ts) with its handler, authorised before it is called. */
const API_HANDLERS: { [Name in HttpRouteName]: ApiHandler<Name> } = {
  "import-notebook": (req, res, _route, context) => notebookFiles(req, res, context),
  "export-notebook": (req, res, _route, context) => notebookFiles(req, res, context),
  "list-executions": (req, res, _route, context) => executionRoutes(req, res, context),
  "execution-metrics": (req, res, _route, context) => executionRoutes(req, res, context),
  "workshop-summary": (req, res, route, { options, onError }) => serveWorkshopSummary(req, res, options.lab.workshops, route.workshopId, onError),
};

function serveApi<Name extends HttpRouteName>(req: IncomingMessage, res: ServerResponse, api: Extract<ApiRoute, { name: Name }>, actor: Actor, options: EdgeOptions): void {
  const onError = (error: unknown) => options.onError(error, `${req.method ?? ""} ${req.url ?? ""}`);
  const handler: ApiHandler<Name> = API_HANDLERS[api.name];
  handler(req, res, api, { actor, options, onError });
}

function notebookFiles(req: IncomingMessage, res: ServerResponse, { actor, options, onError }: ApiContext): void {
  const { lab } = options;
  handleNotebookFiles(req, res, {
    notebooks: lab.catalog.repos.notebooks,
    predictions: lab.catalog.repos.predictions,
    ownerId: actor.userId,
    onError,
    chartOf: (executionId) => executionChartSvg(lab.repositories.metrics, executionId),
    templates: lab.scenarios,
    hostIds: options.hostIds,
    freshTitle: (base) => lab.catalog.freshTitle(actor.userId, base),
  });
}

function executionRoutes(req: IncomingMessage, res: ServerResponse, { actor, options, onError }: ApiContext): void {
  const { lab } = options;
  const readable = async (notebookIds: readonly string[]) => lab.access.gate.filterNotebooks(actor, notebookIds, "read");
  handleExecutionRoutes(req, res, { metrics: lab.repositories.metrics, onError, readable });
}

async function serveMetrics(req: IncomingMessage, res: ServerResponse, metrics: NonNullable<EdgeOptions["metrics"]>, options: EdgeOptions): Promise<void> {
  const verdict = authorizeMetrics(metricsRequestOf(req), options.metricsToken ?? null);
  if (!verdict.ok) {
    if (verdict.code !== "not-found") options.onRefused(req, verdict.reason);
    if (verdict.code === "unauthorized") res.setHeader("WWW-Authenticate", 'Bearer realm="mgpulab metrics"');
    return void sendError(res, verdict.code, verdict.reason);
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    return void sendError(res, "invalid", "/metrics answers GET", 405);
  }
  const text = await metrics.render();
  res.writeHead(200, { "Content-Type": metrics.contentType, "Cache-Control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : text);
}

/**
 * Once Better Auth has answered: a signed-out session's open tabs are
 * disconnected; after a password change (which replaces every session of
 * the user with one new one for this browser), all the user's old ones are.
 */
async function endSocketsAfter(route: "/sign-out" | "/change-password", req: IncomingMessage, res: ServerResponse, options: EdgeOptions): Promise<void> {
  const actor = await actorOf(options.lab.access.auth, req.headers);
  if (!actor) return;
  res.once("finish", () => {
    if (res.statusCode >= 300) return;
    const notices = options.lab.access.notices;
    if (route === "/sign-out") notices.ended({ sessionId: actor.sessionId }, "signed-out");
    else notices.ended({ userId: actor.userId }, "revoked");
  });
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, "Cache-Control": "no-store" });
  res.end();
}
