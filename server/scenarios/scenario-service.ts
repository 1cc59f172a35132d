/**
 * One warm Python process answering the scenario catalog's questions
 * (`python -m mgpulab_scenarios.service`): JSON requests and replies, one per
 * line. Importing torch costs about a second, so a parameter form that
 * re-renders code must not start a new interpreter per keystroke.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { KERNELS_DIR } from "../kernel/kernel-bundle";
import { CommandError } from "../errors";

const replySchema = z.union([
  z.object({ id: z.number(), ok: z.literal(true), result: z.unknown() }),
  z.object({ id: z.number(), ok: z.literal(false), kind: z.string(), error: z.string() }),
]);

/** The catalog refused the request (unknown id, bad parameter value): the user's to fix. */
export class ScenarioRequestError extends CommandError {
  /** `kind` as the service says it: "unknown" (no such scenario or template), "parameter" or "request" (a value or request it refuses). */
  constructor(kind: string, message: string) {
    super(kind === "unknown" ? "not-found" : "invalid", message);
  }
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const STDERR_KEPT = 4_000;

export class ScenarioService {
  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderrTail = "";

  constructor(
    private readonly python: string,
    private readonly timeoutMs = 60_000,
  ) {}

  request(op: string, body: Record<string, unknown>): Promise<unknown> {
    const child = this.ensureChild();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new CommandError("unavailable", `scenario catalog did not answer ${op} within ${this.timeoutMs / 1000} s`));
        this.stop(); // a stuck interpreter would answer later requests out of turn
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ ...body, id, op })}\n`);
    });
  }

  stop(): void {
    const child = this.child;
    this.child = null;
    child?.stdin.end();
    child?.kill();
    this.failAll(new CommandError("unavailable", "scenario catalog stopped"));
  }

  private ensureChild(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = spawn(this.python, ["-m", "mgpulab_scenarios.service"], {
      cwd: path.resolve(KERNELS_DIR),
      env: { ...process.env, PYTHONPATH: KERNELS_DIR, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.stderrTail = "";
    createInterface({ input: child.stdout }).on("line", (line) => this.onLine(line));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_KEPT);
    });
    child.stdin.on("error", () => undefined); // reported through "exit"
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = null;
      const last = this.stderrTail.trim().split("\n").pop() ?? "";
      this.failAll(new CommandError("unavailable", `scenario catalog exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ""}`));
    });
    child.on("error", (error) => {
      if (this.child === child) this.child = null;
      this.failAll(new CommandError("unavailable", `scenario catalog could not start: ${error.message}`));
    });
    return child;
  }

  private onLine(line: string): void {
    let reply: z.infer<typeof replySchema>;
    try {
      reply = replySchema.parse(JSON.parse(line));
    } catch {
      return; // not a reply (the service keeps stdout for replies; ignore anything else)
    }
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.result);
    else if (reply.kind === "internal") pending.reject(new Error(`scenario catalog failed: ${reply.error}`));
    else pending.reject(new ScenarioRequestError(reply.kind, reply.error));
  }

  private failAll(error: Error): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.pending.delete(id);
    }
  }
}
