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
  type CommandAck,
  type LabAck,
  type LabCommand,
  type ServerToClientEvents,
} from "../core/protocol/socket-api";
import { assertNever } from "../core/assert-never";
import type { ScenarioSummary } from "../core/protocol/notebook-model";
import { MAX_MESSAGE_BYTES } from "../core/limits";
import { RUNNING_KERNELS_SHUTDOWN_REASON } from "../notebook/kernel-policy";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { LabHosts } from "../hosts/lab-hosts";
import type { Logger } from "../logger";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import { CommandError, describeInvalid, toClientError } from "../errors";

export type LabServer = Server<ClientToServerEvents, ServerToClientEvents>;
type LabSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** Room for any valid command (MAX_MESSAGE_BYTES); shared by the server and its tests. */
export const SOCKET_SERVER_OPTIONS = { maxHttpBufferSize: MAX_MESSAGE_BYTES, pingTimeout: 20_000 } as const;

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

/** `hosts`: the lab's configured hosts (the hosts page); null where kernels run on one launcher without agents (tests of the kernel path). */
export function attachNotebookSocket(io: LabServer, hub: NotebookHub, log: Logger, scenarios: ScenarioCatalog, hosts: LabHosts | null = null): void {
  const fail = (error: unknown, what: string) => {
    const failure = toClientError(error);
    if (!failure.expected) log.error({ err: error }, `${what} failed`);
    return failure;
  };
  watchViewers(io, hub);
  io.on("connection", (socket: LabSocket) => {
    socket.on("notebook:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: CommandAck) => void) : () => undefined;
      handleCommand(socket, hub, raw).then(reply, (error: unknown) => {
        const { error: message, code, conflict } = fail(error, "command");
        reply(conflict ? { ok: false, error: message, code, conflict } : { ok: false, error: message, code });
      });
    });
    socket.on("lab:command", (raw: unknown, ack: unknown) => {
      const reply = typeof ack === "function" ? (ack as (reply: LabAck) => void) : () => undefined;
      handleLabCommand(hub, scenarios, hosts, raw).then(reply, (error: unknown) => {
        const { error: message, code } = fail(error, "lab command");
        reply({ ok: false, error: message, code });
      });
    });
  });
}

async function handleCommand(socket: LabSocket, hub: NotebookHub, raw: unknown): Promise<CommandAck> {
  const parsed = notebookCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command = parsed.data;
  if (command.op === "open") {
    const runtime = await hub.open(command.notebookId);
    await socket.join(roomOf(command.notebookId));
    return runtime.join(command.resume);
  }
  const runtime = await hub.get(command.notebookId);
  if (!runtime || !socket.rooms.has(roomOf(command.notebookId))) {
    throw new CommandError("invalid", `open notebook ${command.notebookId} before sending ${command.op}`);
  }
  if (command.op === "presence") hub.viewerVisibility(command.notebookId, socket.id, command.visible);
  else await runtime.handle(command, socket.id);
  return { ok: true };
}

async function handleLabCommand(hub: NotebookHub, scenarios: ScenarioCatalog, hosts: LabHosts | null, raw: unknown): Promise<LabAck> {
  const parsed = labCommandSchema.safeParse(raw);
  if (!parsed.success) throw new CommandError("invalid", describeInvalid(parsed.error.issues));
  const command: LabCommand = parsed.data;
  switch (command.op) {
    case "list-notebooks":
      return { ok: true, notebooks: await hub.catalog.list(command.state ?? "active") };
    case "create-notebook":
      return { ok: true, notebook: await hub.catalog.create(command.title) };
    case "duplicate-notebook":
      return { ok: true, notebook: await hub.catalog.duplicate(command.notebookId) };
    case "rename-notebook":
      return { ok: true, notebook: await hub.rename(command.notebookId, command.title) };
    case "delete-notebook":
      return { ok: true, notebook: await hub.setDeleted(command.notebookId, true) };
    case "restore-notebook":
      return { ok: true, notebook: await hub.setDeleted(command.notebookId, false) };
    case "list-scenarios":
      return { ok: true, scenarios: await scenarios.list() };
    case "find-scenario-copy": {
      const summary = await findScenario(scenarios, command.scenarioId);
      const existing = await hub.catalog.latestScenarioCopy(command.scenarioId);
      const freshTitle = await hub.catalog.freshTitle(summary.title);
      return existing ? { ok: true, notebook: existing, freshTitle } : { ok: true, freshTitle };
    }
    case "create-from-scenario": {
      const summary = await findScenario(scenarios, command.scenarioId);
      const cells = await scenarios.notebookCells(command.scenarioId, command.params ?? {});
      return { ok: true, notebook: await hub.catalog.createWithCells(await hub.catalog.freshTitle(summary.title), cells) };
    }
    case "list-kernels":
      return { ok: true, kernels: await hub.kernels.list() };
    case "shutdown-kernel":
      await hub.kernels.shutdown(command.notebookId, RUNNING_KERNELS_SHUTDOWN_REASON);
      return { ok: true, kernels: await hub.kernels.list() };
    case "shutdown-all-kernels":
      await hub.kernels.shutdownAll(RUNNING_KERNELS_SHUTDOWN_REASON);
      return { ok: true, kernels: await hub.kernels.list() };
    case "list-hosts": {
      if (!hosts) return { ok: true, hosts: [] };
      const holders = await hub.agentKernelHolders();
      return { ok: true, hosts: await hosts.view((kernel) => holders.get(kernel) ?? null) };
    }
    case "check-host": {
      if (!hosts) throw new CommandError("not-found", `no host "${command.hostId}": this lab runs its kernels without host agents`);
      const holders = await hub.agentKernelHolders();
      return { ok: true, host: await hosts.check(command.hostId, (kernel) => holders.get(kernel) ?? null) };
    }
    default:
      return assertNever(command, "lab command");
  }
}

async function findScenario(scenarios: ScenarioCatalog, scenarioId: string): Promise<ScenarioSummary> {
  const summary = (await scenarios.list()).find((scenario) => scenario.id === scenarioId);
  if (!summary) throw new CommandError("not-found", `no scenario ${scenarioId}`);
  return summary;
}

/**
 * A notebook's viewers are the sockets in its room, counted where socket.io
 * adds and removes them: joining on open, and leaving on any disconnect
 * (closed tab, lost network, ping timeout), which `disconnect` handlers
 * alone would not all see in order.
 */
function watchViewers(io: LabServer, hub: NotebookHub): void {
  const rooms = io.of("/").adapter;
  rooms.on("join-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") hub.viewerJoined(notebookId, socketId);
  });
  rooms.on("leave-room", (room: unknown, socketId: unknown) => {
    const notebookId = notebookOfRoom(room);
    if (notebookId !== null && typeof socketId === "string") hub.viewerLeft(notebookId, socketId);
  });
}

function notebookOfRoom(room: unknown): string | null {
  const prefix = roomOf("");
  return typeof room === "string" && room.startsWith(prefix) ? room.slice(prefix.length) : null;
}
