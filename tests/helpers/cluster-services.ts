/**
 * The real services several lab servers need, started from Debian's
 * packages on loopback for one test file: Redis (redis-server) and a load
 * balancer (nginx) in front of the lab servers. Each lives in its own temp
 * directory and is stopped (and the directory removed) by `stop()`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { nginxConf } from "../../scripts/nginx-conf";

const REDIS_SERVER = "/usr/bin/redis-server";
const NGINX = "/usr/sbin/nginx";

function needBinary(binary: string, pkg: string): void {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: install Debian's ${pkg} (scripts/test.sh installs it when run as root)`);
}

/** A TCP port nothing listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number, child: ChildProcess, what: string, output: () => string, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}:\n${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} in ${limitMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  await exited;
}

export class RedisService {
  private child: ChildProcess;
  private log = "";

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {
    this.child = this.spawn();
  }

  /** A Redis on a free loopback port, without persistence: a restart starts empty, the harshest case. */
  static async start(): Promise<RedisService> {
    needBinary(REDIS_SERVER, "redis-server");
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-redis-"));
    const redis = new RedisService(await freePort(), dir);
    await redis.ready();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  private spawn(): ChildProcess {
    const child = spawn(REDIS_SERVER, ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", this.dir], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (chunk: Buffer) => (this.log += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (this.log += chunk.toString()));
    return child;
  }

  private ready(): Promise<void> {
    return listening(this.port, this.child, "redis-server", () => this.log);
  }

  /** Stops Redis (what it held is gone). */
  async kill(): Promise<void> {
    await stopChild(this.child, "SIGKILL");
  }

  /** Starts it again on the same port. */
  async restart(): Promise<void> {
    await stopChild(this.child, "SIGKILL");
    this.child = this.spawn();
    await this.ready();
  }

  async stop(): Promise<void> {
    await stopChild(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class NginxBalancer {
  private log = "";

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private child: ChildProcess,
  ) {
    this.follow(child);
  }

  private follow(child: ChildProcess): void {
    child.stdout!.on("data", (chunk: Buffer) => (this.log += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (this.log += chunk.toString()));
  }

  private static spawn(dir: string): ChildProcess {
    return spawn(NGINX, ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-e", "stderr", "-g", "daemon off;"], { stdio: ["ignore", "pipe", "pipe"] });
  }

  /** The master's pid (its worker is its child). */
  get pid(): number {
    return this.child.pid!;
  }

  /**
   * Stops nginx at once (SIGTERM: its fast shutdown, which closes every
   * connection through it, WebSockets included) and starts it again on the
   * same port and configuration; resolves once it listens.
   */
  async restart(): Promise<void> {
    await stopChild(this.child, "SIGTERM");
    this.child = NginxBalancer.spawn(this.dir);
    this.follow(this.child);
    await listening(this.port, this.child, "nginx", () => this.log);
  }

  /**
   * nginx on `port` balancing round-robin over `upstreams` (loopback ports),
   * WebSocket upgrades passed through, no sticky sessions. A server that
   * refuses connections is skipped for the next try (proxy_next_upstream).
   */
  static async start(port: number, upstreams: number[]): Promise<NginxBalancer> {
    needBinary(NGINX, "nginx-light");
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-nginx-"));
    mkdirSync(path.join(dir, "temp"));
    writeFileSync(path.join(dir, "nginx.conf"), nginxConf(port, upstreams, dir));
    const child = NginxBalancer.spawn(dir);
    const balancer = new NginxBalancer(port, dir, child);
    await listening(port, child, "nginx", () => balancer.log);
    return balancer;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    await stopChild(this.child, "SIGQUIT");
    rmSync(this.dir, { recursive: true, force: true });
  }
}
