/**
 * What a lab op's handler is, apart from the socket edge that calls it: the
 * feature modules (notebooks, scenarios, kernels, hosts, accounts, sharing,
 * workshops) each register theirs over these services, and the edge
 * (notebook-socket.ts) only authenticates, looks up, authorises and
 * dispatches. Separate so a feature module never imports the edge.
 */
import type { Socket } from "socket.io";
import type { ClientToServerEvents, ServerToClientEvents } from "../core/protocol/socket-api";
import type { LabOp, LabReply, LabRequest } from "../core/protocol/ops-lab";
import type { Actor, LabAccess } from "../auth";
import type { NotebookHub } from "../notebook/notebook-hub";
import type { NotebookDrivers } from "../cluster/notebook-drivers";
import type { ScenarioCatalog } from "../scenarios/scenario-catalog";
import type { LabHosts } from "../hosts/lab-hosts";
import type { Workshops } from "../workshops/workshops";
import type { LabRepositories } from "../persistence";

export type LabSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

/** What a handler may do with the asking connection: join a room whose pushes it then gets (a workshop's console). */
export interface RoomMember {
  join(room: string): Promise<void> | void;
}

/** A lab op's handler: its request in, its own reply out (a wrong reply does not compile); a refusal is thrown (CommandError). */
export type LabHandler<Op extends LabOp> = (command: LabRequest<Op>, actor: Actor, socket: RoomMember) => Promise<LabReply<Op>>;

/** The handlers of some lab ops: a feature module's share of the table. */
export type LabHandlerTable<Ops extends LabOp> = { readonly [Op in Ops]: LabHandler<Op> };

/** Every lab op's handler: the edge's table compiles only when each op has one. */
export type LabHandlers = LabHandlerTable<LabOp>;

/** The lab's services, as the handlers reach them. */
export interface LabServices {
  hub: NotebookHub;
  /** Where each notebook's commands run (this server, or the one that drives it). */
  drivers: NotebookDrivers;
  scenarios: ScenarioCatalog;
  /** The lab's configured hosts (the hosts page); null where kernels run on one launcher without agents (tests of the kernel path). */
  hosts: LabHosts | null;
  access: LabAccess;
  workshops: Workshops;
  repositories: LabRepositories;
}

/** Runs the handler of the command's op (the op is the table's key, so the handler's request and reply are the op's own). */
export function dispatchLab<Op extends LabOp>(handlers: LabHandlers, op: Op, command: LabRequest<Op>, actor: Actor, socket: RoomMember): Promise<LabReply<Op>> {
  const handler: LabHandler<Op> = handlers[op];
  return handler(command, actor, socket);
}
