/**
 * A real kernel (real PTY, real python3) driven through KernelSession, with
 * helpers that wait on events, never on the clock.
 */
import { localHost } from "../../server/kernel/kernel-host";
import { KernelSession, type ExecutionOutput, type ExecutionStatus, type HangReport, type KernelSessionOptions } from "../../server/kernel/kernel-session";
import type { KernelStatus } from "../../server/core/protocol/notebook-model";

export type OutputEvent = { kind: "console"; text: string } | { kind: "message"; message: ExecutionOutput };

export interface RunResult {
  status: ExecutionStatus;
  executionCount: number | null;
  events: OutputEvent[];
  console: string;
  stderr: string;
  result: string | undefined;
  error: { ename: string; evalue: string; traceback: string[] } | undefined;
}

export class RunningCell {
  readonly events: OutputEvent[] = [];
  readonly done: Promise<RunResult>;
  /** Resolves when the session has sent the cell to the kernel. */
  readonly sent: Promise<void>;
  /** Resolves with the watchdog's first report. */
  readonly hang: Promise<HangReport>;
  private markSent!: () => void;
  private markHang!: (report: HangReport) => void;
  private consoleText = "";
  private readonly consoleWaiters: Array<{ test: (text: string) => boolean; wake: () => void }> = [];
  private resolve!: (result: RunResult) => void;

  constructor() {
    this.done = new Promise((resolve) => {
      this.resolve = resolve;
    });
    this.sent = new Promise((resolve) => {
      this.markSent = resolve;
    });
    this.hang = new Promise((resolve) => {
      this.markHang = resolve;
    });
  }

  /** Resolves once the console output so far satisfies `test`. */
  waitForConsole(test: (text: string) => boolean): Promise<void> {
    if (test(this.consoleText)) return Promise.resolve();
    return new Promise((wake) => this.consoleWaiters.push({ test, wake }));
  }

  sink() {
    return {
      started: () => this.markSent(),
      hang: (report: HangReport) => this.markHang(report),
      console: (text: string) => {
        this.events.push({ kind: "console", text });
        this.consoleText += text;
        // Bounded so a flood test can watch for its marker without keeping 100 MB.
        if (this.consoleText.length > 1 << 20) this.consoleText = this.consoleText.slice(-(1 << 19));
        for (const waiter of this.consoleWaiters.splice(0)) {
          if (waiter.test(this.consoleText)) waiter.wake();
          else this.consoleWaiters.push(waiter);
        }
      },
      output: (message: ExecutionOutput) => this.events.push({ kind: "message", message }),
      finished: ({ status, executionCount }: { status: ExecutionStatus; executionCount: number | null }) => {
        const messages = this.events.flatMap((event) => (event.kind === "message" ? [event.message] : []));
        const result = messages.find((message) => message.type === "execute_result");
        const error = messages.find((message) => message.type === "error");
        this.resolve({
          status,
          executionCount,
          events: this.events,
          console: this.events.map((event) => (event.kind === "console" ? event.text : "")).join(""),
          stderr: messages.map((message) => (message.type === "stream" && message.name === "stderr" ? message.text : "")).join(""),
          result: result?.type === "execute_result" ? result.data["text/plain"] : undefined,
          error: error?.type === "error" ? { ename: error.ename, evalue: error.evalue, traceback: error.traceback } : undefined,
        });
      },
    };
  }
}

export class TestKernel {
  readonly session: KernelSession;

  private constructor(options: Partial<KernelSessionOptions>) {
    const host = localHost();
    this.session = new KernelSession({ launch: () => ({ host, gpus: 0 }), ...options });
  }

  static async start(options: Partial<KernelSessionOptions> = {}): Promise<TestKernel> {
    const kernel = new TestKernel(options);
    await kernel.session.ensureStarted();
    if (kernel.session.status.state !== "idle") throw new Error(`kernel did not start: ${JSON.stringify(kernel.session.status)}`);
    return kernel;
  }

  /** Queues code; await `.done` for the result. */
  submit(code: string): RunningCell {
    const cell = new RunningCell();
    this.session.execute(code, cell.sink());
    return cell;
  }

  run(code: string): Promise<RunResult> {
    return this.submit(code).done;
  }

  waitForStatus(test: (status: KernelStatus) => boolean): Promise<KernelStatus> {
    if (test(this.session.status)) return Promise.resolve(this.session.status);
    return new Promise((resolve) => {
      const stop = this.session.onStatus((status) => {
        if (!test(status)) return;
        stop();
        resolve(status);
      });
    });
  }

  async close(): Promise<void> {
    await this.session.shutdown();
  }
}
