/**
 * A child on plain pipes (node's child stdio: socket pairs), with PtyProcess's shape (bytes in, typed exit,
 * write, terminate): for a link that needs no terminal. The local host
 * agent's link is one: its bootstrap hands both socket pairs to the agent
 * (kernels/mgpulab_agent/links.py go_direct), so the lab and the agent talk
 * with no process between them, and the bootstrap only lives as long as the
 * link (its end is the link's end). A PTY's line discipline hands every write to a
 * kernel worker before the other side can read it, which costs a wake-up
 * each way (about 0.06 ms a round trip on the development machine, 0.08
 * against 0.02 ms median in an echo test); ssh -tt and srun --pty keep
 * their PTY.
 *
 * stdout and stderr arrive as one byte stream, as on a PTY: what a failing
 * bootstrap prints on stderr is part of the link's output.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { ExitLatch, signalProcessGroup, type PtyExit } from "./process-exit";
import { cleanEnvironment, type PtyProcess, type PtyProcessOptions } from "./pty-process";

/** What a link needs of its local process, whichever kind carries it. */
export type LinkProcess = Pick<PtyProcess, "pid" | "hasExited" | "write" | "waitForExit" | "terminate">;

export class PipeProcess implements LinkProcess {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly exit = new ExitLatch();

  constructor(
    options: Pick<PtyProcessOptions, "argv" | "cwd" | "env">,
    onData: (bytes: Buffer) => void,
    private readonly onExit: (exit: PtyExit) => void,
  ) {
    const [file, ...args] = options.argv;
    if (!file) throw new Error("a link command needs at least a program");
    // detached: its own process group, as a PTY's session, so terminate() reaches whatever it started in it.
    // NODE_ENV: the typings require the key; cleanEnvironment() keeps the server's own anyway.
    const env: NodeJS.ProcessEnv = { NODE_ENV: process.env.NODE_ENV, ...(options.env ?? cleanEnvironment()) };
    this.child = spawn(file, args, { cwd: options.cwd ?? process.cwd(), env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.child.stdout.on("data", onData);
    this.child.stderr.on("data", onData);
    // A write to a child that has just died fails with EPIPE: its exit is reported below, the write is moot.
    this.child.stdin.on("error", () => undefined);
    // A spawn that fails (no such program) ends like a process that exited 127, as a shell would say.
    this.child.on("error", () => this.finish({ exitCode: 127, signal: null }));
    // "close", not "exit": every byte it wrote has been read by then.
    this.child.on("close", (code, signal) => this.finish({ exitCode: code ?? 0, signal: signal ? constants.signals[signal] : null }));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get hasExited(): boolean {
    return this.exit.value !== null;
  }

  write(data: string): void {
    if (this.hasExited) return;
    this.child.stdin.write(data);
  }

  waitForExit(timeoutMs: number): Promise<PtyExit | null> {
    return this.exit.wait(timeoutMs);
  }

  /** Its stdin closed and SIGHUP (what a PTY's end would bring), then SIGKILL to its group if it lingers. */
  async terminate(graceMs = 2000): Promise<PtyExit | null> {
    if (this.exit.value) return this.exit.value;
    this.child.stdin.end();
    this.signalGroup("SIGHUP");
    const exit = await this.waitForExit(graceMs);
    if (exit) return exit;
    this.signalGroup("SIGKILL");
    return this.waitForExit(graceMs);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.hasExited || this.child.pid === undefined) return;
    signalProcessGroup(this.child.pid, signal);
  }

  private finish(exit: PtyExit): void {
    // Recorded first (onExit sees hasExited); the waiters' promises resolve after onExit has run.
    if (this.exit.settle(exit)) this.onExit(exit);
  }
}
