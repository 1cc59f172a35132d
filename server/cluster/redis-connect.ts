/**
 * Connecting to the Redis the lab servers share, with a deadline: node-redis
 * retries an unreachable server forever, which would leave a lab server
 * hanging at start with nothing said. Past the deadline the client is
 * dropped and the start fails, naming the URL (without its password).
 */
/** The part of a node-redis client this needs. */
interface Connectable {
  connect(): Promise<unknown>;
  quit(): Promise<unknown>;
  destroy(): void;
}

const CONNECT_DEADLINE_MS = 10_000;

export class RedisUnreachable extends Error {}

export async function connectWithin(client: Connectable, url: string, what: string, deadlineMs = CONNECT_DEADLINE_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new RedisUnreachable(`cannot reach Redis at ${withoutPassword(url)} (${what}) within ${deadlineMs / 1000} s: is it running, and is MGPULAB_REDIS_URL right?`)), deadlineMs);
  });
  try {
    await Promise.race([client.connect(), late]);
  } catch (error) {
    client.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "the configured URL";
  }
}

/**
 * Closes a client without waiting on Redis: QUIT to a Redis that is gone
 * waits for a reconnect that never comes (a stop of the whole cluster stops
 * Redis at the same time), so after a second the connection is dropped.
 */
export async function closeRedis(client: Pick<Connectable, "quit" | "destroy">, graceMs = 1_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const quitted = await Promise.race([
    client.quit().then(() => true, () => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!quitted) {
    try {
      client.destroy();
    } catch {
      // already closed
    }
  }
}
