/**
 * Compiled by `npm run typecheck`, never run: each `@ts-expect-error` line
 * is an op the tables must refuse. Should a table stop requiring a reply
 * schema or an access need, the line compiles, the directive is unused,
 * and the typecheck fails.
 */
import { z } from "zod";
import { defineLabOps, LAB_OPS, type LabAnswer, type LabReply } from "../../server/core/protocol/ops-lab";
import { defineNotebookOps, NOTEBOOK_OPS, type NotebookReply } from "../../server/core/protocol/ops-notebook";
import { nothing } from "../../server/core/protocol/op-table";
import type { LabHandler } from "../../server/socket/notebook-socket";
import type { DriverHandler } from "../../server/cluster/notebook-drivers";
import { defineHttpRoutes, HTTP_ROUTES, type ApiRoute } from "../../server/core/protocol/routes-http";

const ping = z.object({ op: z.literal("ping") });

// A whole entry compiles.
defineLabOps({ ...LAB_OPS, ping: { request: ping, reply: nothing, access: { kind: "signed-in" } } });
defineNotebookOps({ ...NOTEBOOK_OPS, ping: { request: ping, reply: nothing, access: "read" } });

// A lab op without a reply schema.
// @ts-expect-error reply is required
defineLabOps({ ...LAB_OPS, ping: { request: ping, access: { kind: "signed-in" } } });
// A lab op without an access need.
// @ts-expect-error access is required
defineLabOps({ ...LAB_OPS, ping: { request: ping, reply: nothing } });
// A lab op whose need is not a lab rule.
// @ts-expect-error a lab op's access is a LabRule
defineLabOps({ ...LAB_OPS, ping: { request: ping, reply: nothing, access: "read" } });
// A lab op filed under another op's name.
// @ts-expect-error the request's op is the entry's key
defineLabOps({ ...LAB_OPS, pong: { request: ping, reply: nothing, access: { kind: "signed-in" } } });

// A notebook op without a reply schema.
// @ts-expect-error reply is required
defineNotebookOps({ ...NOTEBOOK_OPS, ping: { request: ping, access: "read" } });
// A notebook op without an access need.
// @ts-expect-error access is required
defineNotebookOps({ ...NOTEBOOK_OPS, ping: { request: ping, reply: nothing } });

// A reply is the op's own: whoami answers `me`, and nothing else will do.
export const me: LabReply<"whoami">["me"]["id"] = "u1";
// @ts-expect-error whoami's reply has no hosts
export const hosts: LabReply<"whoami">["hosts"] = [];
// @ts-expect-error an answer to list-users is not an answer to list-hosts
export const wrong: LabAnswer<"list-hosts"> = { ok: true, users: [] };
// @ts-expect-error complete answers a completion, not an inspection
export const inspection: NotebookReply<"complete">["inspection"] = null;

// A handler answers its own op's reply: list-hosts' handler cannot answer users, nor leave out its hosts.
export const listHosts: LabHandler<"list-hosts"> = () => Promise.resolve({ ok: true, hosts: [] });
// @ts-expect-error list-hosts answers hosts
export const listHostsWrong: LabHandler<"list-hosts"> = () => Promise.resolve({ ok: true, users: [] });
// @ts-expect-error list-hosts answers hosts
export const listHostsEmpty: LabHandler<"list-hosts"> = () => Promise.resolve({ ok: true });

// The same for a notebook op's handler: complete answers a completion.
export const completeOk: DriverHandler<"complete"> = () => Promise.resolve({ ok: true, completion: { status: "unavailable", reason: "busy" } });
// @ts-expect-error complete answers a completion
export const completeEmpty: DriverHandler<"complete"> = () => Promise.resolve({ ok: true });
// @ts-expect-error complete answers a completion, not an inspection
export const completeWrong: DriverHandler<"complete"> = () => Promise.resolve({ ok: true, inspection: { status: "unavailable", reason: "busy" } });

// HTTP routes (routes-http.ts): a whole entry compiles; one without an access need, or whose path answers another route's name, does not.
defineHttpRoutes({ ...HTTP_ROUTES, "list-kernels": { match: (path: string) => (path === "/api/kernels" ? { name: "list-kernels" as const } : null), access: { kind: "lab", action: "list-all-kernels" } } });
// @ts-expect-error access is required
defineHttpRoutes({ ...HTTP_ROUTES, "list-kernels": { match: (path: string) => (path === "/api/kernels" ? { name: "list-kernels" as const } : null) } });
// @ts-expect-error the route's match answers its own name
defineHttpRoutes({ ...HTTP_ROUTES, "list-kernels": { match: (path: string) => (path === "/api/kernels" ? { name: "list-hosts" as const } : null), access: { kind: "lab", action: "list-all-kernels" } } });
// @ts-expect-error a route's access is a RouteRule (a socket op's "signed-in" is not one: every route names what it needs)
defineHttpRoutes({ ...HTTP_ROUTES, "list-kernels": { match: (path: string) => (path === "/api/kernels" ? { name: "list-kernels" as const } : null), access: { kind: "signed-in" } } });
// A route's id is typed by the route: the workshop summary carries a workshopId, the execution list none.
export const summaryId: Extract<ApiRoute, { name: "workshop-summary" }>["workshopId"] = "w1";
// @ts-expect-error the execution list's path carries no id
export const listId: Extract<ApiRoute, { name: "list-executions" }>["executionId"] = "e1";
