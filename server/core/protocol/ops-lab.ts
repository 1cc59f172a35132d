/**
 * The lab's ops (`lab:command`): the notebook list, scenarios, kernels,
 * hosts, users, shares and workshops. Each is declared once: its request,
 * its reply and what it needs (op-table.ts). Lists answer only with what
 * the actor may see (the handlers ask the gate for that); a participant's
 * scenario commands are checked against their workshop by the handler.
 */
import { z } from "zod";
import { ACCOUNT_ROLES, type Me, type ShareView, type UserView, type WorkshopView } from "./accounts-model";
import type { LabRule } from "./access-needs";
import { hostId, id, isoTime, parameterValues, title } from "./fields";
import type { HostView } from "./hosts-model";
import type { KernelListing } from "./kernels-model";
import type { NotebookListItem, ScenarioSummary } from "./notebook-model";
import { answerOf, nothing, refusalSchema, requestsOf, view, views, type OpTable, type Refusal } from "./op-table";
import { WORKSHOP_PACES, type ParticipantWorkshopView, type WorkshopConsoleView } from "./workshop-model";

/** The most participants one workshop admits at once. */
export const MAX_WORKSHOP_CAPACITY = 500;

const signedIn = { kind: "signed-in" } as const satisfies LabRule;
const lab = (action: Extract<LabRule, { kind: "lab" }>["action"]) => ({ kind: "lab", action }) as const satisfies LabRule;
const notebook = (action: Extract<LabRule, { kind: "notebook" }>["action"]) => ({ kind: "notebook", action }) as const satisfies LabRule;
const workshop = { kind: "workshop" } as const satisfies LabRule;

const notebookReply = z.object({ notebook: view<NotebookListItem>() });
const kernelsReply = z.object({ kernels: view<KernelListing>() });
const userReply = z.object({ user: view<UserView>() });
const usersReply = z.object({ users: views<UserView>() });
const sharesReply = z.object({ shares: views<ShareView>() });
const consoleReply = z.object({ console: view<WorkshopConsoleView>() });

/** Checks that every op of the table is declared in full (op-table.ts); the table itself stays as written. */
export function defineLabOps<T extends OpTable<T, LabRule>>(table: T): T {
  return table;
}

export const LAB_OPS = defineLabOps({
  "list-notebooks": {
    request: z.object({ op: z.literal("list-notebooks"), state: z.enum(["active", "deleted"]).optional() }),
    reply: z.object({ notebooks: views<NotebookListItem>() }),
    access: lab("list-own"),
  },
  /** Without a title the notebook is "Untitled" (or "Untitled (1)", … when the owner has one already), renamed in place later. */
  "create-notebook": { request: z.object({ op: z.literal("create-notebook"), title: title.optional() }), reply: notebookReply, access: lab("create-notebook") },
  "rename-notebook": { request: z.object({ op: z.literal("rename-notebook"), notebookId: id, title }), reply: notebookReply, access: notebook("manage") },
  "duplicate-notebook": {
    request: z.object({ op: z.literal("duplicate-notebook"), notebookId: id }),
    reply: notebookReply,
    access: { kind: "notebook", action: "read", also: "create-notebook" },
  },
  /** Soft delete: `restore-notebook` undoes it. */
  "delete-notebook": { request: z.object({ op: z.literal("delete-notebook"), notebookId: id }), reply: notebookReply, access: notebook("manage") },
  "restore-notebook": { request: z.object({ op: z.literal("restore-notebook"), notebookId: id }), reply: notebookReply, access: notebook("manage") },
  "list-scenarios": { request: z.object({ op: z.literal("list-scenarios") }), reply: z.object({ scenarios: views<ScenarioSummary>() }), access: lab("list-scenarios") },
  /**
   * Before opening a scenario: the user's most recently edited copy of it
   * (`notebook`, absent when there is none) and the title a fresh copy would get (`freshTitle`).
   */
  "find-scenario-copy": {
    request: z.object({ op: z.literal("find-scenario-copy"), scenarioId: id }),
    reply: z.object({ notebook: view<NotebookListItem>().optional(), freshTitle: z.string() }),
    access: lab("list-scenarios"),
  },
  /**
   * A new notebook from a scenario, titled so that no other notebook has its
   * title ("… (2)"); `params` are checked by the catalog (type, range) before anything is created.
   */
  "create-from-scenario": {
    request: z.object({ op: z.literal("create-from-scenario"), scenarioId: id, params: parameterValues.optional() }),
    reply: notebookReply,
    access: lab("list-scenarios"),
  },
  /** The Running kernels view: every live kernel of this server, with its processes' memory. */
  "list-kernels": { request: z.object({ op: z.literal("list-kernels") }), reply: kernelsReply, access: lab("list-own") },
  /** Ends a notebook's kernel (the notebook stays as it is); answered with the new list. */
  "shutdown-kernel": { request: z.object({ op: z.literal("shutdown-kernel"), notebookId: id }), reply: kernelsReply, access: { kind: "stop-kernel" } },
  /**
   * Ends a listed kernel whose notebook the viewer may not name (an admin's list), by its opaque ref.
   * Only a list of every kernel holds refs to notebooks the viewer may not name: only who may list all may use them.
   */
  "shutdown-listed-kernel": {
    request: z.object({ op: z.literal("shutdown-listed-kernel"), kernelRef: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/) }),
    reply: kernelsReply,
    access: lab("list-all-kernels"),
  },
  "shutdown-all-kernels": { request: z.object({ op: z.literal("shutdown-all-kernels") }), reply: kernelsReply, access: lab("list-own") },
  /** The hosts page: every configured host, its link, agent, interpreter and GPUs (connected ones asked briefly; others as last seen). */
  "list-hosts": { request: z.object({ op: z.literal("list-hosts") }), reply: z.object({ hosts: views<HostView>() }), access: lab("list-hosts") },
  /** Connects to one host now (starting its agent) and asks its health; answered with its view, unreachable or not. */
  "check-host": { request: z.object({ op: z.literal("check-host"), hostId }), reply: z.object({ host: view<HostView>() }), access: lab("check-host") },
  /** Who this session is, and what their role lets the pages offer. */
  whoami: { request: z.object({ op: z.literal("whoami") }), reply: z.object({ me: view<Me>() }), access: signedIn },
  /** Admin: the lab's users. */
  "list-users": { request: z.object({ op: z.literal("list-users") }), reply: usersReply, access: lab("manage-users") },
  "create-user": {
    request: z.object({ op: z.literal("create-user"), name: z.string().max(200), email: z.string().max(320), password: z.string().max(200), role: z.enum(ACCOUNT_ROLES) }),
    reply: userReply,
    access: lab("manage-users"),
  },
  "set-user-role": { request: z.object({ op: z.literal("set-user-role"), userId: id, role: z.enum(ACCOUNT_ROLES) }), reply: userReply, access: lab("manage-users") },
  /** Ends the user's sessions at once (their open tabs are disconnected); their notebooks stay. */
  "remove-user": { request: z.object({ op: z.literal("remove-user"), userId: id }), reply: usersReply, access: lab("manage-users") },
  /** Admin: a new password for a user who has one; their sessions end (they sign in with the new one). */
  "set-user-password": { request: z.object({ op: z.literal("set-user-password"), userId: id, password: z.string().max(200) }), reply: userReply, access: lab("manage-users") },
  /** The owner: who this notebook is shared with. */
  "list-shares": { request: z.object({ op: z.literal("list-shares"), notebookId: id }), reply: sharesReply, access: notebook("manage") },
  /** The owner shares with a user by e-mail for "read" or "run", or stops sharing ("none"); answered with the shares. */
  "share-notebook": {
    request: z.object({ op: z.literal("share-notebook"), notebookId: id, email: z.string().max(320), access: z.enum(["read", "run", "none"]) }),
    reply: sharesReply,
    access: notebook("manage"),
  },
  /** Facilitator: their workshops with participants and their copies. */
  "list-workshops": { request: z.object({ op: z.literal("list-workshops") }), reply: z.object({ workshops: views<WorkshopView>() }), access: lab("run-workshops") },
  /**
   * Facilitator: a workshop from scenarios; answered with its join code.
   * Times are ISO strings (none: it starts now and ends when ended); the plan
   * says where participants' kernels run and how many are in at once.
   */
  "create-workshop": {
    request: z.object({
      op: z.literal("create-workshop"),
      title,
      scenarioIds: z.array(id).min(1).max(20),
      startsAt: isoTime.optional(),
      endsAt: isoTime.optional(),
      capacity: z.number().int().min(1).max(MAX_WORKSHOP_CAPACITY).optional(),
      hostId: hostId.optional(),
      gpusPerParticipant: z.number().int().min(0).max(64).optional(),
      pace: z.enum(WORKSHOP_PACES).optional(),
    }),
    reply: z.object({ workshop: view<WorkshopView>() }),
    access: lab("run-workshops"),
  },
  /** Facilitator: the console's view of their workshop; this connection then gets `workshop:console` on every change (ask again after a reconnect: a new connection is in no console's room). */
  "workshop-console": { request: z.object({ op: z.literal("workshop-console"), workshopId: id }), reply: consoleReply, access: workshop },
  /**
   * Facilitator: change a running workshop. `closed` closes (or reopens) the
   * room to new joiners; `revealedSteps` with pace "led" reveals steps to
   * everyone; `end` ends it now (kernels shut down, notebooks read-only).
   */
  "update-workshop": {
    request: z.object({
      op: z.literal("update-workshop"),
      workshopId: id,
      closed: z.boolean().optional(),
      capacity: z.number().int().min(1).max(MAX_WORKSHOP_CAPACITY).optional(),
      pace: z.enum(WORKSHOP_PACES).optional(),
      revealedSteps: z.number().int().min(1).max(1_000).optional(),
      endsAt: isoTime.nullable().optional(),
      end: z.literal(true).optional(),
    }),
    reply: consoleReply,
    access: workshop,
  },
  /** Facilitator: a message, a parameter preset, or both, to every participant (each chooses to apply a preset). */
  "workshop-broadcast": {
    request: z
      .object({
        op: z.literal("workshop-broadcast"),
        workshopId: id,
        message: z.string().trim().min(1).max(2_000).optional(),
        preset: z.object({ scenarioId: id, values: parameterValues }).optional(),
      })
      .refine((command) => command.message !== undefined || command.preset !== undefined, "a broadcast needs a message or a preset"),
    reply: nothing,
    access: workshop,
  },
  /** Restart a notebook's kernel without opening it (the console restarting one participant's kernel). */
  "restart-kernel": { request: z.object({ op: z.literal("restart-kernel"), notebookId: id }), reply: nothing, access: notebook("run") },
  /** Participant: their workshop (admission, pace, broadcasts). Every connection of a participant gets `workshop:participant` on every change; this answer is for a page that just opened. */
  "my-workshop": { request: z.object({ op: z.literal("my-workshop") }), reply: z.object({ participantWorkshop: view<ParticipantWorkshopView>() }), access: lab("see-own-workshop") },
});

type LabOps = typeof LAB_OPS;
export type LabOp = keyof LabOps;
/** What `op` takes. */
export type LabRequest<Op extends LabOp> = z.output<LabOps[Op]["request"]>;
/** What `op` takes, with its op spelled out so that a generic `send` infers which reply to expect. */
export type LabSend<Op extends LabOp> = LabRequest<Op> & { op: Op };
/** What a success of `op` answers. */
export type LabReply<Op extends LabOp> = { ok: true } & z.output<LabOps[Op]["reply"]>;
/** What `op` is answered with: its reply, or a refusal. */
export type LabAnswer<Op extends LabOp> = LabReply<Op> | Refusal;

export const labCommandSchema = z.discriminatedUnion("op", requestsOf(LAB_OPS));
export type LabCommand = z.infer<typeof labCommandSchema>;

/** Each op's reply schema, typed by its op (so a lookup by a generic op keeps the op's own type). */
const LAB_REPLIES: { readonly [Op in LabOp]: { readonly reply: z.ZodType<z.output<LabOps[Op]["reply"]>> } } = LAB_OPS;

/** What arrived as the answer to `op`, as `op` declares it (op-table.ts: answerOf). */
export function labAnswerOf<Op extends LabOp>(op: Op, wire: unknown): LabAnswer<Op> {
  return answerOf(op, LAB_REPLIES[op].reply, refusalSchema, wire);
}

/** Whether `op` names a lab op. */
export function isLabOp(op: string): op is LabOp {
  return Object.hasOwn(LAB_OPS, op);
}
