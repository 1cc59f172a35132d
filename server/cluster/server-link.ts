/**
 * Requests from one lab server to another, over Redis pub/sub: each server
 * listens on its own channel; a request names the sender, whose channel
 * gets the reply. Point to point, so a request for the server that drives a
 * notebook costs one hop, and a dead server is known at once: Redis says
 * how many subscribers a PUBLISH reached, and a killed process has none.
 *
 * The publisher has no offline queue: while Redis is away a request fails
 * at once (the client is told to try again) instead of running minutes
 * later, after its sender gave up on it.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import { CommandError } from "../errors";
import { closeRedis, connectWithin } from "./redis-connect";
import { isErrorCode } from "../core/errors";
import {
  clusterEnvelopeSchema,
  type ClusterEnvelope,
  type ClusterReply,
  type ClusterRequest,
} from "../core/protocol/cluster-messages";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

/** The part of a node-redis client the link uses. */
interface RedisClient {
  publish(channel: string, message: string): Promise<number>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  quit(): Promise<unknown>;
  destroy(): void;
}

export type RequestHandler = (request: ClusterRequest, from: string) => Promise<unknown>;

export interface ServerLinkOptions {
  redisUrl: string;
  /** Names the lab: servers of another lab on the same Redis never hear these requests. */
  labId: string;
  serverId: string;
  /** How long a request waits for its reply. */
  timeoutMs?: number;
  /** How long a stopping server waits for the replies to requests it has sent (see close()). */
  closeDrainMs?: number;
  log?: Log;
}

const DEFAULT_TIMEOUT_MS = 8_000;
const DEFAULT_CLOSE_DRAIN_MS = 2_000;

export class ServerLink {
  private readonly pending = new Map<string, { resolve: (reply: ClusterReply) => void; timer: NodeJS.Timeout; serverId: string }>();
  /** Woken when the last pending request is settled (close() waits on it). */
  private drained: Array<() => void> = [];
  private handler: RequestHandler = async () => {
    throw new CommandError("unavailable", "this lab server is still starting");
  };

  private constructor(
    private readonly options: ServerLinkOptions,
    private readonly publisher: RedisClient,
    private readonly subscriber: RedisClient,
  ) {}

  /** Connects to Redis and listens on this server's channel; a Redis not reached within `connectDeadlineMs` is an error (RedisUnreachable). */
  static async open(options: ServerLinkOptions, connectDeadlineMs?: number): Promise<ServerLink> {
    const publisher = createClient({ url: options.redisUrl, disableOfflineQueue: true });
    const subscriber = createClient({ url: options.redisUrl });
    const say = (which: string) => (error: unknown) => options.log?.("warning", `redis (${which}): ${errorMessage(error)}`);
    publisher.on("error", say("server link"));
    subscriber.on("error", say("server link subscriber"));
    await Promise.all([connectWithin(publisher, options.redisUrl, "server link", connectDeadlineMs), connectWithin(subscriber, options.redisUrl, "server link", connectDeadlineMs)]);
    const link = new ServerLink(options, publisher, subscriber);
    await subscriber.subscribe(link.channelOf(options.serverId), (message) => link.onMessage(message));
    return link;
  }

  get serverId(): string {
    return this.options.serverId;
  }

  /** Who answers requests to this server. */
  serve(handler: RequestHandler): void {
    this.handler = handler;
  }

  /**
   * Sends a request to `serverId` and resolves with its result; throws a
   * CommandError: "unavailable" when the server is gone, Redis is away or
   * no reply came in time, or the code the other server's failure had.
   */
  async request(serverId: string, request: ClusterRequest, timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS): Promise<unknown> {
    const id = randomUUID();
    const replied = new Promise<ClusterReply>((resolve) => {
      const timer = setTimeout(() => this.settle(id, { ok: false, code: "unavailable", error: `lab server ${serverId} did not answer within ${timeoutMs} ms` }), timeoutMs);
      this.pending.set(id, { resolve, timer, serverId });
    });
    const envelope: ClusterEnvelope = { type: "request", id, from: this.options.serverId, request };
    let receivers: number;
    try {
      receivers = await this.publisher.publish(this.channelOf(serverId), JSON.stringify(envelope));
    } catch (error) {
      this.settle(id, { ok: false, code: "unavailable", error: `the lab's servers cannot reach each other (Redis: ${errorMessage(error)})` });
      return unwrap(await replied);
    }
    if (receivers === 0) this.settle(id, { ok: false, code: "unavailable", error: `lab server ${serverId} is not running` });
    return unwrap(await replied);
  }

  /**
   * A request already sent may be carried out by the other server (an execute forwarded to a notebook's driver),
   * so it is never answered as refused: the replies still on their way are waited for (a few ms, as a rule),
   * up to `closeDrainMs`; a request still unanswered then is what a timeout is, an answer that may have been lost.
   */
  async close(): Promise<void> {
    const drainMs = this.options.closeDrainMs ?? DEFAULT_CLOSE_DRAIN_MS;
    if (this.pending.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.drained.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs))),
      ]);
      clearTimeout(timer);
    }
    for (const [id, { serverId }] of this.pending) {
      this.settle(id, { ok: false, code: "unavailable", error: `lab server ${serverId} did not answer within ${drainMs} ms, before this server stopped: it may have been done` });
    }
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.publisher)]);
  }

  private channelOf(serverId: string): string {
    return `mgpulab:${this.options.labId}:server:${serverId}`;
  }

  private settle(id: string, reply: ClusterReply): void {
    const waiting = this.pending.get(id);
    if (!waiting) return;
    this.pending.delete(id);
    clearTimeout(waiting.timer);
    waiting.resolve(reply);
    if (this.pending.size === 0) for (const wake of this.drained.splice(0)) wake();
  }

  private onMessage(raw: string): void {
    let envelope: ClusterEnvelope;
    try {
      const parsed = clusterEnvelopeSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) throw new Error(parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
      envelope = parsed.data;
    } catch (error) {
      this.options.log?.("warning", `ignored a malformed message on this server's channel: ${errorMessage(error)}`);
      return;
    }
    if (envelope.type === "reply") {
      this.settle(envelope.id, envelope.reply);
      return;
    }
    void this.answer(envelope.id, envelope.from, envelope.request);
  }

  private async answer(id: string, from: string, request: ClusterRequest): Promise<void> {
    let reply: ClusterReply;
    try {
      reply = { ok: true, result: (await this.handler(request, from)) ?? null };
    } catch (error) {
      reply = error instanceof CommandError ? { ok: false, code: error.code, error: error.message } : { ok: false, code: "internal", error: errorMessage(error) };
      if (!(error instanceof CommandError)) this.options.log?.("error", `${request.kind} for server ${from} failed: ${reply.error}`);
    }
    const envelope: ClusterEnvelope = { type: "reply", id, reply };
    await this.publisher.publish(this.channelOf(from), JSON.stringify(envelope)).catch((error: unknown) => {
      this.options.log?.("warning", `the reply to server ${from} was lost (Redis: ${errorMessage(error)})`);
    });
  }
}

function unwrap(reply: ClusterReply): unknown {
  if (reply.ok) return reply.result;
  throw new CommandError(isErrorCode(reply.code) ? reply.code : "internal", reply.error);
}
