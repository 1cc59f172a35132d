/**
 * The socket.io edge: validates every command off the wire, routes it to the
 * notebook hub, and turns any failure into one clear acknowledgement.
 */
import type { Server, ServerOptions, Socket } from "socket.io";
import { checkSocketHandshake, type LabNames } from "../http/request-guard";
import {
  labCommandSchema,
  notebookCommandSchema,
  type ClientToServerEvents,
  type LabCommand,
  type ServerToClientEvents,
} from "../core/protocol/socket-api";
import type { LabAnswer, LabOp, LabReply, LabRequest } from "../core/protocol/ops-lab";
import type { NotebookAnswer, NotebookOp, NotebookSend } from "../core/protocol/ops-notebook";
import type { ScenarioSummary } from "../core/protocol/notebook-model";
import { MAX_MESSAGE_BYTES } from "../core/limits";
import { RUNNING_KERNELS_SHUTDOWN_REASON } from "../notebook/kernel-policy";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { LabHosts } from "../hosts/lab-hosts";
import type { Logger } from "../logger";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import { CommandError, describeFieldRule, describeInvalid, toClientError } from "../errors";
import type { LabAccess, Actor } from "../auth";
import { authorizeLabCommand, authorizeNotebookCommand } from "../auth/authorize";
import { newAccountSchema, type NewAccount } from "../auth/accounts";
import type { Me, NotebookAccessLevel, ShareView } from "../core/protocol/accounts-model";
import type { HolderName } from "../core/protocol/hosts-model";
import { HolderNaming } from "../hosts/holder-names";
import type { KernelListing, ListedKernel } from "../core/protocol/kernels-model";
import type { LabRepositories } from "../persistence";
import type { Workshops } from "../workshops/workshops";
import { attachSocketSessions, userRoom } from "./socket-sessions";
import type { NotebookDrivers } from "../cluster/notebook-drivers";

/** The title of a notebook created without one ("New notebook" opens it at once). */
const UNTITLED = "Untitled";

export type LabServer = Server<ClientToServerEvents, ServerToClientEvents>;
type LabSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/**
 * Room for any valid command (MAX_MESSAGE_BYTES); shared by the server and
 * its tests. WebSocket only: a connection is one TCP stream to one server,
 * so several lab servers behind a load balancer need no sticky sessions
 * (long-polling's requests could land on different servers).
 */
export const SOCKET_SERVER_OPTIONS: Partial<ServerOptions> = { maxHttpBufferSize: MAX_MESSAGE_BYTES, pingTimeout: 20_000, transports: ["websocket"] };

/**
 * The socket server's options with the handshake guard: only the lab's own
 * names and origins may open a connection (request-guard.ts). `names` is read
 * per handshake because the port is known only once the server listens.
 */
export function socketServerOptions(names: () => LabNames, onRefused: (reason: string) => void): Partial<ServerOptions> {
  return {
    ...SOCKET_SERVER_OPTIONS,
    allowRequest: (req, callback) => {
      const verdict = checkSocketHandshake(req.headers, names());
      if (!verdict.ok) onRefused(verdict.reason);
      callback(verdict.ok ? null : verdict.reason, verdict.ok);
    },
  };
}

export function roomOf(notebookId: string): string {
  return `notebook:${notebookId}`;
}

/** The facilitator consoles open on one workshop. */
function consoleRoom(workshopId: string): string {
  return `workshop-console:${workshopId}`;
}

export interface SocketServices {
  hub: NotebookHub;
  /** Where each notebook's commands run (this server, or the one that drives it). */
  drivers: NotebookDrivers;
  scenarios: ScenarioCatalog;
  /** The lab's configured hosts (the hosts page); null where kernels run on one launcher without agents (tests of the kernel path). */
  hosts: LabHosts | null;
  access: LabAccess;
  workshops: Workshops;
  repositories: LabRepositories;
  log: Logger;
}

/**
 * Every connection is a signed-in person (socket-sessions.ts), and every
 * event is authorised through server/auth/authorize.ts before it reaches
 * the hub: there is no other path from a socket to the lab.
 */
export function attachNotebookSocket(io: LabServer, services: SocketServices): void {
  const { log } = services;
  const fail = (error: unknown, what: string) => {
    const failure = toClientError(error);
    if (!failure.expected) log.error({ err: error }, `${what} failed`);
    return failure;
  };
  const sessions = attachSocketSessions(io, services.access, services.repositories.accounts, services.drivers.several);
  watchViewers(io, services.drivers);
  const handlers = labHandlers(services);
  services.workshops.attach({
    console: (workshopId, view) => io.to(consoleRoom(workshopId)).emit("workshop:console", workshopId, view),
    participant: (userId, view) => io.to(userRoom(userId)).emit("workshop:participant", view),
    // With several servers a console may be open on another one: the views are computed wherever the events happen.
    watching: (workshopId) => services.drivers.several || (io.of("/").adapter.rooms.get(consoleRoom(workshopId))?.size ?? 0) > 0,
  });
  io.on("connection", (socket: LabSocket) => {
    // A participant's roster row says whether a tab of theirs is connected.
    const connected = socket.data.actor as Actor;
    const workshopId = connected.role === "participant" ? connected.workshopId : null;
    if (workshopId !== null) {
      services.workshops.live.connected(connected.userId, workshopId);
      socket.on("disconnect", () => services.workshops.live.disconnected(connected.userId, workshopId));
    }
    socket.on("notebook:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: NotebookAnswer<NotebookOp>) => void) : () => undefined;
      sessions
        .current(socket)
        .then((actor) => handleCommand(socket, actor, services, raw))
        .then(reply, (error: unknown) => {
          const { error: message, code, conflict } = fail(error, "command");
          reply(conflict ? { ok: false, error: message, code, conflict } : { ok: false, error: message, code });
        });
    });
    socket.on("lab:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: LabAnswer<LabOp>) => void) : () => undefined;
      sessions
        .current(socket)
        .then((actor) => handleLabCommand(socket, actor, services, handlers, raw))
        .then(reply, (error: unknown) => {
          const { error: message, code } = fail(error, "lab command");
          reply({ ok: false, error: message, code });
        });
    });
  });
}

async function handleCommand(socket: LabSocket, actor: Actor, services: SocketServices, raw: unknown): Promise<NotebookAnswer<NotebookOp>> {
  const parsed = notebookCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command = parsed.data;
  const level = await authorizeNotebookCommand(services.access.gate, actor, command);
  if (command.op === "open") return open(socket, actor, services, command, level);
  if (!socket.rooms.has(roomOf(command.notebookId))) {
    throw new CommandError("invalid", `open notebook ${command.notebookId} before sending ${command.op}`);
  }
  // Run where the notebook is driven (notebook-drivers.ts: each op's handler there).
  return services.drivers.command(command.notebookId, { command, socketId: socket.id, participant: actor.role === "participant" });
}

/** Joins the notebook's room and answers the snapshot (or the missed events) with what this viewer may do. */
async function open(socket: LabSocket, actor: Actor, services: SocketServices, command: NotebookSend<"open">, level: NotebookAccessLevel): Promise<NotebookAnswer<"open">> {
  const room = roomOf(command.notebookId);
  // In the room first: an event sent while the snapshot is made arrives after it (and is skipped by its seq) instead of being lost.
  const wasIn = socket.rooms.has(room);
  await socket.join(room);
  const ack = await services.drivers.command(command.notebookId, { command, socketId: socket.id, participant: actor.role === "participant" });
  if (!ack.ok && !wasIn) await socket.leave(room);
  // The facilitator's roster shows a participant on the copy they just opened.
  if (ack.ok && actor.role === "participant" && actor.workshopId) services.workshops.live.opened(actor.userId, actor.workshopId, command.notebookId);
  return ack.ok ? { ...ack, access: level } : ack;
}

/** A lab op's handler: its request in, its own reply out (a wrong reply does not compile); a refusal is thrown (CommandError). */
export type LabHandler<Op extends LabOp> = (command: LabRequest<Op>, actor: Actor, socket: LabSocket) => Promise<LabReply<Op>>;
type LabHandlers = { readonly [Op in LabOp]: LabHandler<Op> };

async function handleLabCommand(socket: LabSocket, actor: Actor, services: SocketServices, handlers: LabHandlers, raw: unknown): Promise<LabAnswer<LabOp>> {
  const parsed = labCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command: LabCommand = parsed.data;
  await authorizeLabCommand(services.access.gate, actor, command);
  return dispatchLab(handlers, command.op, command, actor, socket);
}

function dispatchLab<Op extends LabOp>(handlers: LabHandlers, op: Op, command: LabRequest<Op>, actor: Actor, socket: LabSocket): Promise<LabReply<Op>> {
  const handler: LabHandler<Op> = handlers[op];
  return handler(command, actor, socket);
}

/** Each lab op's handler, over the services; the edge above has validated and authorised the command. */
function labHandlers(services: SocketServices): LabHandlers {
  const { hub, drivers, scenarios, hosts, access, workshops } = services;
  const users = async (actor: Actor) => (await access.accounts.list()).map((user) => ({ ...user, you: user.id === actor.userId }));
  return {
    whoami: async (_command, actor) => ({ ok: true, me: await describeMe(actor, services) }),
    "list-notebooks": async (command, actor) => ({ ok: true, notebooks: await hub.catalog.list(command.state ?? "active", await access.gate.readableNotebooks(actor)) }),
    "create-notebook": async (command, actor) => {
      const title = command.title ?? (await hub.catalog.freshTitle(actor.userId, UNTITLED));
      return { ok: true, notebook: await hub.catalog.create(actor.userId, title) };
    },
    "duplicate-notebook": async (command, actor) => ({ ok: true, notebook: await hub.catalog.duplicate(actor.userId, command.notebookId) }),
    "rename-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "rename", title: command.title });
      return { ok: true, notebook: await hub.catalog.summary(command.notebookId) };
    },
    "delete-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "deleted", deleted: true });
      return { ok: true, notebook: await hub.catalog.summary(command.notebookId) };
    },
    "restore-notebook": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "deleted", deleted: false });
      return { ok: true, notebook: await hub.catalog.summary(command.notebookId) };
    },
    "list-scenarios": async (_command, actor) => {
      const offered = await offeredScenarios(actor, services);
      return { ok: true, scenarios: (await scenarios.list()).filter((scenario) => offered === null || offered.has(scenario.id)) };
    },
    "find-scenario-copy": async (command, actor) => {
      const summary = await findScenario(actor, services, command.scenarioId);
      const existing = await hub.catalog.latestScenarioCopy(actor.userId, command.scenarioId);
      const freshTitle = await hub.catalog.freshTitle(actor.userId, summary.title);
      return existing ? { ok: true, notebook: existing, freshTitle } : { ok: true, freshTitle };
    },
    "create-from-scenario": async (command, actor) => {
      const summary = await findScenario(actor, services, command.scenarioId);
      // A participant's copy is filed under their workshop (once admitted, before the end); anybody else's needs the right to create notebooks.
      if (actor.role === "participant") await workshops.requireAdmitted(actor.userId);
      else access.gate.requireLab(actor, "create-notebook");
      const cells = await scenarios.notebookCells(command.scenarioId, command.params ?? {});
      const title = await hub.catalog.freshTitle(actor.userId, summary.title);
      return { ok: true, notebook: await hub.catalog.createWithCells(actor.userId, title, cells, actor.workshopId) };
    },
    "list-kernels": async (_command, actor) => ({ ok: true, kernels: await visibleKernels(actor, services) }),
    "shutdown-kernel": async (command, actor) => {
      await drivers.notebookOp(command.notebookId, { op: "shutdown-kernel", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "shutdown-listed-kernel": async (command, actor) => {
      const running = (await drivers.listKernels()).kernels.map((kernel) => kernel.notebookId);
      const notebookId = access.kernelRefs.resolve(command.kernelRef, running);
      if (notebookId === null) throw new CommandError("not-found", "that kernel is no longer running");
      await drivers.notebookOp(notebookId, { op: "shutdown-kernel", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "shutdown-all-kernels": async (_command, actor) => {
      const all = await drivers.listKernels();
      const stoppable = await access.gate.filterNotebooks(actor, all.kernels.map((kernel) => kernel.notebookId), "stop-kernel");
      for (const notebookId of stoppable) await drivers.notebookOp(notebookId, { op: "shutdown-kernel", reason: RUNNING_KERNELS_SHUTDOWN_REASON });
      return { ok: true, kernels: await visibleKernels(actor, services) };
    },
    "list-hosts": async (_command, actor) => {
      if (!hosts) return { ok: true, hosts: [] };
      const holders = await visibleHolders(actor, services);
      return { ok: true, hosts: await hosts.view((kernel) => holders.get(kernel) ?? null) };
    },
    "check-host": async (command, actor) => {
      if (!hosts) throw new CommandError("not-found", `no host "${command.hostId}": this lab runs its kernels without host agents`);
      const holders = await visibleHolders(actor, services);
      return { ok: true, host: await hosts.check(command.hostId, (kernel) => holders.get(kernel) ?? null) };
    },
    "list-users": async (_command, actor) => ({ ok: true, users: await users(actor) }),
    "create-user": async (command) => ({ ok: true, user: await access.accounts.create(parseNewAccount(command)) }),
    "set-user-role": async (command) => {
      const user = await access.accounts.setRole(command.userId, command.role);
      // Open tabs keep working, under the new role from their next event.
      access.notices.roleChanged(command.userId, command.role);
      return { ok: true, user };
    },
    "remove-user": async (command, actor) => {
      await access.accounts.remove(command.userId, actor.userId);
      access.notices.ended({ userId: command.userId }, "removed");
      return { ok: true, users: await users(actor) };
    },
    "set-user-password": async (command) => {
      const user = await access.accounts.setPassword(command.userId, command.password);
      access.notices.ended({ userId: command.userId }, "revoked");
      return { ok: true, user };
    },
    "list-shares": async (command) => ({ ok: true, shares: await listShares(services.repositories, command.notebookId) }),
    "share-notebook": async (command, actor) => {
      await share(services, actor, command.notebookId, command.email, command.access);
      return { ok: true, shares: await listShares(services.repositories, command.notebookId) };
    },
    "list-workshops": async (_command, actor) => ({ ok: true, workshops: await workshops.listFor(actor.userId) }),
    "create-workshop": async (command, actor) => {
      const { op: _op, title, scenarioIds, ...options } = command;
      return { ok: true, workshop: await workshops.create(actor.userId, title, scenarioIds, options) };
    },
    "workshop-console": async (command, _actor, socket) => {
      await socket.join(consoleRoom(command.workshopId));
      return { ok: true, console: await workshops.consoleView(command.workshopId) };
    },
    "update-workshop": async (command) => {
      const { op: _op, workshopId, ...changes } = command;
      await workshops.update(workshopId, changes);
      return { ok: true, console: await workshops.consoleView(workshopId) };
    },
    "workshop-broadcast": async (command) => {
      await workshops.broadcast(command.workshopId, command.message ?? null, command.preset ?? null);
      return { ok: true };
    },
    "restart-kernel": async (command) => {
      await drivers.notebookOp(command.notebookId, { op: "restart-kernel" });
      return { ok: true };
    },
    "my-workshop": async (_command, actor) => ({ ok: true, participantWorkshop: await workshops.participantView(actor.userId) }),
  };
}

async function describeMe(actor: Actor, services: SocketServices): Promise<Me> {
  const email = await services.repositories.accounts.emailOf(actor.userId);
  const gate = services.access.gate;
  return {
    id: actor.userId,
    name: actor.name,
    email: email.endsWith(".invalid") ? null : email,
    role: actor.role,
    workshopId: actor.workshopId,
    sessionExpiresAt: actor.expiresAt.toISOString(),
    can: {
      createNotebooks: gate.may(actor, "create-notebook"),
      manageUsers: gate.may(actor, "manage-users"),
      runWorkshops: gate.may(actor, "run-workshops"),
      seeHosts: gate.may(actor, "list-hosts"),
    },
  };
}

/** The scenario ids a participant's workshop offers; null: every scenario (everyone else). */
async function offeredScenarios(actor: Actor, services: SocketServices): Promise<Set<string> | null> {
  if (actor.role !== "participant") return null;
  return new Set(actor.workshopId ? await services.workshops.scenarioIdsOf(actor.workshopId) : []);
}

/**
 * An admin sees every kernel (a held GPU is everyone's problem), those of notebooks they may not read by
 * their owner's name alone; anyone else sees only the kernels of notebooks they may read.
 */
async function visibleKernels(actor: Actor, services: SocketServices): Promise<KernelListing> {
  const all = await services.drivers.listKernels();
  const { gate, kernelRefs } = services.access;
  const readable = await gate.filterNotebooks(actor, all.kernels.map((kernel) => kernel.notebookId), "read");
  const seeAll = gate.may(actor, "list-all-kernels");
  const hidden = all.kernels.filter((kernel) => !readable.has(kernel.notebookId)).map((kernel) => kernel.notebookId);
  const owners = hidden.length === 0 || !seeAll ? new Map<string, string>() : await services.repositories.access.ownerNames(hidden);
  const kernels: ListedKernel[] = [];
  for (const kernel of all.kernels) {
    const kernelRef = kernelRefs.of(kernel.notebookId);
    if (readable.has(kernel.notebookId)) kernels.push({ ...kernel, kernelRef });
    else if (seeAll) kernels.push({ ...kernel, notebookId: null, title: `a notebook of ${owners.get(kernel.notebookId) ?? "another user"}`, kernelRef });
  }
  return { ...all, kernels };
}

/** Who holds or waits for GPUs: the person always, a notebook the actor may read by its title (hosts/holder-names.ts). */
function visibleHolders(actor: Actor, services: SocketServices): Promise<Map<string, HolderName>> {
  return new HolderNaming({ holders: () => services.drivers.agentHolders(), owners: services.repositories.access, gate: services.access.gate }).forActor(actor);
}

function parseNewAccount(command: LabRequest<"create-user">): NewAccount {
  const parsed = newAccountSchema.safeParse(command);
  // The admin's form: its field's rule, in words ("a password has at least 10 characters").
  if (!parsed.success) throw new CommandError("invalid", describeFieldRule(parsed.error.issues));
  return parsed.data;
}

async function listShares(repositories: LabRepositories, notebookId: string): Promise<ShareView[]> {
  const rows = await repositories.shares.list(notebookId);
  return rows.map((row) => ({ userId: row.userId, name: row.name, email: row.email, access: row.access === "run" ? "run" : "read" }));
}

async function share(services: SocketServices, actor: Actor, notebookId: string, email: string, level: "read" | "run" | "none"): Promise<void> {
  const { accounts, shares } = services.repositories;
  const user = await accounts.activeUserByEmail(email);
  // Participants are nobody's to share with: their sessions see their own copies only.
  if (!user || user.role === "participant") throw new CommandError("not-found", `no user with the e-mail ${email.trim()}`);
  if (user.id === actor.userId) throw new CommandError("invalid", "this notebook is yours already");
  if (level === "none") await shares.remove(notebookId, user.id);
  else await shares.set(notebookId, user.id, level);
}

async function findScenario(actor: Actor, services: SocketServices, scenarioId: string): Promise<ScenarioSummary> {
  const offered = await offeredScenarios(actor, services);
  const summary = offered === null || offered.has(scenarioId) ? (await services.scenarios.list()).find((scenario) => scenario.id === scenarioId) : undefined;
  if (!summary) throw new CommandError("not-found", `no scenario ${scenarioId}`);
  return summary;
}

/**
 * A notebook's viewers are the sockets in its room, counted where socket.io
 * adds and removes them: joining on open, and leaving on any disconnect
 * (closed tab, lost network, ping timeout), which `disconnect` handlers
 * alone would not all see in order.
 */
function watchViewers(io: LabServer, drivers: NotebookDrivers): void {
  const rooms = io.of("/").adapter;
  rooms.on("join-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") drivers.viewer(notebookId, socketId, "joined");
  });
  rooms.on("leave-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") drivers.viewer(notebookId, socketId, "left");
  });
}

/** This server's connections in the notebook's room (a server that takes a notebook over counts them as its viewers). */
export function localViewersOf(io: LabServer, notebookId: string): string[] {
  return [...(io.of("/").adapter.rooms.get(roomOf(notebookId)) ?? [])];
}

function notebookOfRoom(room: unknown): string | null {
  const prefix = roomOf("");
  return typeof room === "string" && room.startsWith(prefix) ? room.slice(prefix.length) : null;
}
