/**
 * socket.io across lab servers: the Redis streams adapter, so that an event
 * a notebook's driver emits to the notebook's room reaches its viewers on
 * every server. Recovery does not rest on the adapter: when this server's
 * Redis connection comes back after a loss, events meant for its viewers may
 * have been dropped, so every viewer here is told to re-open its notebook
 * from its journal position (the driver answers with what it missed).
 */
import { createAdapter } from "@socket.io/redis-streams-adapter";
import { createClient } from "redis";
import { closeRedis, connectWithin } from "./redis-connect";

export interface ClusterSocketAdapter {
  adapter: ReturnType<typeof createAdapter>;
  close(): Promise<void>;
}

export async function openSocketAdapter(
  redisUrl: string,
  labId: string,
  onRecovered: () => void,
  log: (level: "info" | "warning" | "error", message: string) => void,
): Promise<ClusterSocketAdapter> {
  const client = createClient({ url: redisUrl });
  let lost = false;
  client.on("error", (error: unknown) => {
    if (!lost) log("warning", `redis (socket adapter): ${error instanceof Error ? error.message : String(error)}; viewers on other servers miss events until it is back`);
    lost = true;
  });
  client.on("ready", () => {
    if (!lost) return;
    lost = false;
    log("info", "redis (socket adapter) is back: viewers re-open their notebooks from where they are");
    onRecovered();
  });
  await connectWithin(client, redisUrl, "socket adapter");
  return {
    // One stream per lab: two labs sharing a Redis never see each other's events.
    adapter: createAdapter(client, { streamName: `mgpulab:${labId}:socket.io`, channelPrefix: `mgpulab:${labId}:socket.io` }),
    close: async () => {
      await closeRedis(client);
    },
  };
}
