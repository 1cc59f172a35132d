/**
 * The lab's own HTTP API (besides Better Auth's sign-in routes, allow-listed
 * in the HTTP edge, and the operator's /metrics), as one table like the
 * socket's ops (ops-lab.ts, ops-notebook.ts): for each route its path and
 * what it needs of whoever asks. The edge (server/http/lab-edge.ts) finds a
 * path's route here, has server/auth/authorize.ts check its need, and calls
 * the route's handler; a path not in the table answers 404, and a route
 * without an access need does not compile (tests/types/op-table.types.ts).
 */
import type { LabAction, NotebookAction } from "./access-needs";

/** An id in a path: what the lab's ids look like (cuids, uuids without dashes, join codes). */
const ID = "([A-Za-z0-9_-]{1,64})";

/** What an HTTP route needs of whoever asks. */
export type RouteRule =
  /** A role permission. */
  | { kind: "lab"; action: LabAction }
  /** Something done with the notebook the path names. */
  | { kind: "notebook"; action: NotebookAction }
  /** Reading the execution the path names (its notebook's read access). */
  | { kind: "execution" }
  /** The workshop the path names, which must be the actor's own as its facilitator. */
  | { kind: "workshop" };

/** One route: how a path is recognised as it (with the id it carries), and what it needs. */
interface RouteSpec<Name extends string> {
  match: (pathname: string) => ({ name: Name } & Record<string, string>) | null;
  access: RouteRule;
}

/** Checks the table where it is written: each entry has its access need, and its match answers its own name. */
export function defineHttpRoutes<const Table extends { [Name in keyof Table & string]: RouteSpec<Name> }>(table: Table): Table {
  return table;
}

/** A path that is exactly `path`. */
function exactly<Route>(path: string, route: Route): (pathname: string) => Route | null {
  return (pathname) => (pathname === path ? route : null);
}

/** A path of `pattern`, whose one group is the id the route carries. */
function withId<Route>(pattern: RegExp, route: (id: string) => Route): (pathname: string) => Route | null {
  return (pathname) => {
    const id = pattern.exec(pathname)?.[1];
    return id === undefined ? null : route(id);
  };
}

export const HTTP_ROUTES = defineHttpRoutes({
  "import-notebook": { match: exactly("/api/notebooks/import", { name: "import-notebook" }), access: { kind: "lab", action: "create-notebook" } },
  "export-notebook": { match: withId(new RegExp(`^/api/notebooks/${ID}/export$`), (notebookId) => ({ name: "export-notebook", notebookId })), access: { kind: "notebook", action: "read" } },
  /** Lists only what the asker may read: its handler filters through the gate. */
  "list-executions": { match: exactly("/api/executions", { name: "list-executions" }), access: { kind: "lab", action: "list-own" } },
  "execution-metrics": { match: withId(new RegExp(`^/api/executions/${ID}/metrics$`), (executionId) => ({ name: "execution-metrics", executionId })), access: { kind: "execution" } },
  "workshop-summary": { match: withId(new RegExp(`^/api/workshops/${ID}/summary\\.csv$`), (workshopId) => ({ name: "workshop-summary", workshopId })), access: { kind: "workshop" } },
});

export type HttpRouteName = keyof typeof HTTP_ROUTES;

/** A request's route, with the id its path carries. */
export type ApiRoute = { [Name in HttpRouteName]: NonNullable<ReturnType<(typeof HTTP_ROUTES)[Name]["match"]>> }[HttpRouteName];

const MATCHERS: ReadonlyArray<(pathname: string) => ApiRoute | null> = Object.values(HTTP_ROUTES).map((spec) => spec.match);

/** Which API route a path is; null: no such route (404). */
export function apiRouteOf(pathname: string): ApiRoute | null {
  for (const match of MATCHERS) {
    const route = match(pathname);
    if (route) return route;
  }
  return null;
}

/** The access need of a request's route. */
export function routeRuleOf(route: ApiRoute): RouteRule {
  return HTTP_ROUTES[route.name].access;
}
