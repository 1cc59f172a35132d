/**
 * The one place that touches node-pty. Callers get raw bytes, a typed exit,
 * and write/kill — never the IPty object.
 */
import * as pty from "node-pty";
import { ExitLatch, signalProcessGroup, type PtyExit } from "./process-exit";

export type { PtyExit } from "./process-exit";

export interface PtyProcessOptions {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
}

export class PtyProcess {
  private readonly term: pty.IPty;
  private readonly exit = new ExitLatch();

  constructor(options: PtyProcessOptions, onData: (bytes: Buffer) => void, onExit: (exit: PtyExit) => void) {
    const [file, ...args] = options.argv;
    if (!file) throw new Error("a kernel launch command needs at least a program");
    this.term = pty.spawn(file, args, {
      name: "xterm-256color",
      cols: options.cols ?? 120,
      rows: options.rows ?? 40,
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? cleanEnvironment(),
      // null: hand us Buffers, so frames and UTF-8 split across reads stay intact.
      encoding: null,
    });
    this.term.onData((data: string | Buffer) => onData(typeof data === "string" ? Buffer.from(data, "utf8") : data));
    this.term.onExit(({ exitCode, signal }) => {
      const exit = { exitCode, signal: signal ? signal : null };
      // Recorded first (onExit sees hasExited); the waiters' promises resolve after onExit has run.
      this.exit.settle(exit);
      onExit(exit);
    });
  }

  get pid(): number {
    return this.term.pid;
  }

  get hasExited(): boolean {
    return this.exit.value !== null;
  }

  write(data: string): void {
    if (this.hasExited) return;
    this.term.write(data);
  }

  /** Signal the whole process group on the tty (the kernel and the ranks it started). */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.hasExited) return;
    signalProcessGroup(this.term.pid, signal);
  }

  waitForExit(timeoutMs: number): Promise<PtyExit | null> {
    return this.exit.wait(timeoutMs);
  }

  /** SIGHUP (as when a terminal closes), then SIGKILL to the group if it lingers. */
  async terminate(graceMs = 2000): Promise<PtyExit | null> {
    if (this.exit.value) return this.exit.value;
    this.signalGroup("SIGHUP");
    const exit = await this.waitForExit(graceMs);
    if (exit) return exit;
    this.signalGroup("SIGKILL");
    return this.waitForExit(graceMs);
  }
}

/** The server's environment minus what must not leak into user kernels. */
export function cleanEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith("npm_") || key === "NODE_OPTIONS" || key === "INIT_CWD") continue;
    env[key] = value;
  }
  return { ...env, TERM: "xterm-256color", PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8", ...extra };
}
