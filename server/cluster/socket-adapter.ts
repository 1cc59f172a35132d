/**
 * socket.io across lab servers: Redis sharded pub/sub (Redis 7), one
 * channel per room, so that an event a notebook's driver emits to the
 * notebook's room reaches its viewers on every server, and only the servers
 * that have a viewer of that room: a server subscribes to a room's channel
 * while one of its connections is in the room (socket.io's "dynamic"
 * subscriptions), and Redis delivers a message to the subscribers of its
 * channel alone. The streams adapter used before wrote every event to one
 * stream that every server read and decoded, viewer or not.
 *
 * Recovery does not rest on the adapter: when this server's Redis
 * connections come back after a loss, events meant for its viewers may have
 * been dropped, so every viewer here is told to re-open its notebook from
 * its journal position (the driver answers with what it missed).
 */
import { createShardedAdapter } from "@socket.io/redis-adapter";
import { createClient } from "redis";
import { closeRedis, connectWithin } from "./redis-connect";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

export interface ClusterSocketAdapter {
  adapter: ReturnType<typeof createShardedAdapter>;
  close(): Promise<void>;
}

/** The channel prefix of a lab's rooms: two labs sharing a Redis never see each other's events. */
export function socketChannelPrefix(labId: string): string {
  return `mgpulab:${labId}:socket.io`;
}

export async function openSocketAdapter(
  redisUrl: string,
  labId: string,
  onRecovered: () => void,
  log: Log,
): Promise<ClusterSocketAdapter> {
  const publisher = createClient({ url: redisUrl });
  const subscriber = publisher.duplicate();
  let lost = false;
  for (const client of [publisher, subscriber]) {
    client.on("error", (error: unknown) => {
      if (!lost) log("warning", `redis (socket adapter): ${errorMessage(error)}; viewers on other servers miss events until it is back`);
      lost = true;
    });
    client.on("ready", () => {
      // Both connections must be back (node-redis subscribes the subscriber's channels again as it reconnects).
      if (!lost || !publisher.isReady || !subscriber.isReady) return;
      lost = false;
      log("info", "redis (socket adapter) is back: viewers re-open their notebooks from where they are");
      onRecovered();
    });
  }
  await connectWithin(publisher, redisUrl, "socket adapter");
  await connectWithin(subscriber, redisUrl, "socket adapter").catch(async (error: unknown) => {
    await closeRedis(publisher);
    throw error;
  });
  return {
    adapter: createShardedAdapter(publisher, subscriber, { channelPrefix: socketChannelPrefix(labId), subscriptionMode: "dynamic" }),
    close: async () => {
      await Promise.all([closeRedis(subscriber), closeRedis(publisher)]);
    },
  };
}
