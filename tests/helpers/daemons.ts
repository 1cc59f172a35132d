/** Starting test daemons and ending everything they started: readiness from their own output, cleanup by process tree. */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A port nothing listens on now (the daemon binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Daemon {
  child: ChildProcess;
  /** Everything it wrote on stdout and stderr so far. */
  output(): string;
}

/** Spawns `argv` and resolves once its output matches `ready`; rejects with its output if it exits or times out first. */
export function startDaemon(argv: string[], ready: RegExp, options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Daemon> {
  const [file, ...args] = argv;
  if (!file) throw new Error("no program");
  const child = spawn(file, args, { env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  const daemon: Daemon = { child, output: () => text };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${file} did not get ready in ${options.timeoutMs ?? 20_000} ms:\n${text}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      if (ready.test(text)) {
        clearTimeout(timer);
        resolve(daemon);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${signal ?? code}) before it was ready:\n${text}`));
    });
  });
}

/** Pids of every live descendant of `pid` (from /proc). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended while we looked
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const list = parents.get(ppid) ?? [];
    list.push(Number(entry));
    parents.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (parent: number) => {
    for (const child of parents.get(parent) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Pids whose environment holds `marker` exactly (KEY=value): what a daemon started, even once re-parented. */
export function processesWithEnv(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(marker)) found.push(Number(entry));
    } catch {
      continue; // ended, or not ours to read
    }
  }
  return found;
}

/** Running, not merely unreaped: a killed process whose new parent (PID 1 in a container) never reaps it stays a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

export function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Waits until `check` holds, polling (for state that has no event of its own: a process ending, a node going idle). */
export async function pollUntil<T>(what: string, check: () => T | null | undefined | false, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** pollUntil for a check that must ask another process (an HTTP API): each try awaits the last. */
export async function pollUntilAsync<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}
