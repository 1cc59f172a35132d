/**
 * The one place that touches node-pty. Callers get raw bytes, a typed exit,
 * and write/kill — never the IPty object.
 */
import * as pty from "node-pty";

export interface PtyExit {
  exitCode: number;
  /** The signal number that ended the process, if a signal did. */
  signal: number | null;
}

export interface PtyProcessOptions {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
}

export class PtyProcess {
  private readonly term: pty.IPty;
  private exited: PtyExit | null = null;
  private readonly exitWaiters: Array<(exit: PtyExit) => void> = [];

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
      this.exited = { exitCode, signal: signal ? signal : null };
      onExit(this.exited);
      for (const wake of this.exitWaiters.splice(0)) wake(this.exited);
    });
  }

  get pid(): number {
    return this.term.pid;
  }

  get hasExited(): boolean {
    return this.exited !== null;
  }

  write(data: string): void {
    if (this.exited) return;
    this.term.write(data);
  }

  /** Signal the whole process group on the tty (the kernel and the ranks it started). */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.exited) return;
    try {
      process.kill(-this.term.pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
    }
  }

  waitForExit(timeoutMs: number): Promise<PtyExit | null> {
    if (this.exited) return Promise.resolve(this.exited);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      this.exitWaiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  /** SIGHUP (as when a terminal closes), then SIGKILL to the group if it lingers. */
  async terminate(graceMs = 2000): Promise<PtyExit | null> {
    if (this.exited) return this.exited;
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
