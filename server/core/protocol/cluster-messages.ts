/**
 * What lab servers say to each other when several serve one lab (over
 * Redis, server/cluster/server-link.ts). A server that receives a client's
 * command for a notebook another server drives has already authorised it
 * (server/auth/authorize.ts) and forwards only the validated command; the
 * driver runs it exactly as it runs its own clients' commands and answers
 * with the acknowledgement the client is owed. Everything read off Redis is
 * parsed here before it is used.
 */
import { z } from "zod";

export const clusterRequestSchema = z.discriminatedUnion("kind", [
  /** A notebook command from a client of the sender (already authorised there). */
  z.object({
    kind: z.literal("notebook-command"),
    notebookId: z.string().min(1).max(100),
    command: z.unknown(),
    socketId: z.string().min(1).max(100),
    /** The sender's client is a workshop participant: a led workshop's unrevealed steps are refused. */
    participant: z.boolean(),
  }),
  /** A client of the sender joined or left the notebook's room: its kernel is in use while anyone views it. */
  z.object({
    kind: z.literal("viewer"),
    notebookId: z.string().min(1).max(100),
    socketId: z.string().min(1).max(100),
    change: z.enum(["joined", "left"]),
  }),
  /** A lab command that changes an open notebook's runtime (authorised by the sender). */
  z.object({
    kind: z.literal("notebook-op"),
    notebookId: z.string().min(1).max(100),
    op: z.discriminatedUnion("op", [
      z.object({ op: z.literal("rename"), title: z.string().max(10_000) }),
      z.object({ op: z.literal("deleted"), deleted: z.boolean() }),
      z.object({ op: z.literal("shutdown-kernel"), reason: z.string().max(1_000) }),
      z.object({ op: z.literal("restart-kernel") }),
    ]),
  }),
  /** The kernels this server runs (the running-kernels page gathers every server's). */
  z.object({ kind: z.literal("list-kernels") }),
  /** Which notebook holds each agent kernel this server drives (the hosts page). */
  z.object({ kind: z.literal("agent-holders") }),
  /** A workshop ended: every server shuts down the kernels of its notebooks that it drives. */
  z.object({ kind: z.literal("workshop-ended"), workshopId: z.string().min(1).max(100) }),
]);
export type ClusterRequest = z.infer<typeof clusterRequestSchema>;

export const clusterReplySchema = z.union([
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.string(), code: z.string() }),
]);
export type ClusterReply = z.infer<typeof clusterReplySchema>;

/** One message on a server's channel: a request to it, or the reply to one of its requests. */
export const clusterEnvelopeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("request"), id: z.string().min(1).max(100), from: z.string().min(1).max(100), request: clusterRequestSchema }),
  z.object({ type: z.literal("reply"), id: z.string().min(1).max(100), reply: clusterReplySchema }),
]);
export type ClusterEnvelope = z.infer<typeof clusterEnvelopeSchema>;
