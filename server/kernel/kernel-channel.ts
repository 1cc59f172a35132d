/**
 * One running kernel process seen as typed messages: starts the bootstrap on
 * a PTY, hands it the package and the nonce, then turns the tty byte stream
 * into validated KernelMessages and console text. Knows nothing of notebooks.
 */
import { randomBytes } from "node:crypto";
import { StringDecoder } from "node:string_decoder";
import {
  BOOT_READY_MARKER,
  DUMP_STACKS_BYTE,
  INTERRUPT_BYTE,
  KERNEL_PROTOCOL_VERSION,
  kernelMessageSchema,
  type BootPayload,
  type KernelMessage,
  type KernelMessageOf,
  type KernelRequest,
} from "../core/protocol/kernel-messages";
import { FrameDecoder } from "./frame-decoder";
import { KERNEL_ENTRY, loadKernelBundle } from "./kernel-bundle";
import { describeKernelExit, type KernelPlacement, type KernelProcess, type KernelProcessEvents } from "./kernel-process";
import { PtyProcess, cleanEnvironment, type PtyExit } from "./pty-process";

export type KernelChannelEvents = KernelProcessEvents;

export interface StartOptions {
  /** The argv that runs `python -c <bootstrap>`, inside the PTY. */
  launchArgv(bootstrap: string): string[];
  hostId: string;
  /** How long to wait for the kernel's hello (ssh and srun can be slow). */
  startTimeoutMs?: number;
  cwd?: string;
  env?: Record<string, string>;
}

const BOOT_OUTPUT_KEPT = 64 * 1024;

export class KernelStartError extends Error {
  constructor(message: string, readonly output: string) {
    super(message);
  }
}

/** A kernel on its own PTY, a child of this server: it ends with the server. */
export class KernelChannel implements KernelProcess {
  private readonly process: PtyProcess;
  private readonly nonce = randomBytes(16).toString("hex");
  private readonly decoder = new FrameDecoder(this.nonce);
  private readonly text = new StringDecoder("utf8");
  private booted = false;
  private bootOutput = "";
  private readonly hello: Promise<KernelMessageOf<"hello">>;

  private constructor(options: StartOptions, private readonly events: KernelChannelEvents) {
    const bundle = loadKernelBundle();
    let helloResolve!: (hello: KernelMessageOf<"hello">) => void;
    let helloReject!: (error: Error) => void;
    this.hello = new Promise((resolve, reject) => {
      helloResolve = resolve;
      helloReject = reject;
    });
    const timeoutMs = options.startTimeoutMs ?? 30_000;
    const timer = setTimeout(() => {
      helloReject(new KernelStartError(`kernel did not start within ${timeoutMs} ms`, this.bootOutput));
      void this.process.terminate(500);
    }, timeoutMs);
    const pendingHello = (message: KernelMessage): boolean => {
      if (message.type !== "hello") return false;
      clearTimeout(timer);
      helloResolve(message);
      return true;
    };

    this.process = new PtyProcess(
      { argv: options.launchArgv(bundle.bootstrap), cwd: options.cwd, env: cleanEnvironment(options.env) },
      (bytes) => this.onBytes(bytes, bundle.modules, pendingHello),
      (exit) => {
        clearTimeout(timer);
        for (const piece of this.decoder.end()) if (piece.kind === "raw") this.emitText(piece.bytes);
        const rest = this.text.end();
        if (rest) this.events.console(rest);
        if (!this.booted || !this.helloSeen) {
          helloReject(new KernelStartError(describeExit(exit, "kernel exited before it started"), this.bootOutput));
        }
        this.events.exit(exit);
      },
    );
    this.placement = { hostId: options.hostId, agentKernelId: null, gpus: [], onThisMachine: true };
  }

  readonly placement: KernelPlacement;
  /** A local PTY's output is not numbered: nothing outlives this server to resume. */
  readonly processedSeq = 0;
  acknowledge(): void {}

  private helloSeen = false;

  /** Starts a kernel and resolves once it has said hello. */
  static async start(options: StartOptions, events: KernelChannelEvents): Promise<{ channel: KernelChannel; hello: KernelMessageOf<"hello"> }> {
    const channel = new KernelChannel(options, events);
    const hello = await channel.hello;
    return { channel, hello };
  }

  get pid(): number {
    return this.process.pid;
  }

  get alive(): boolean {
    return !this.process.hasExited;
  }

  send(request: KernelRequest): void {
    this.process.write(encodeKernelInput(request));
  }

  /** Ctrl-C on the kernel's tty: SIGINT to every process in its foreground group, remote too. */
  interrupt(): void {
    this.process.write(INTERRUPT_BYTE);
  }

  /** Ctrl-\ on the tty: every process that registered faulthandler prints its stacks. */
  requestStacks(): void {
    this.process.write(DUMP_STACKS_BYTE);
  }

  async shutdown(graceMs = 2000): Promise<void> {
    if (!this.alive) return;
    this.send({ type: "shutdown" });
    const exit = await this.process.waitForExit(graceMs);
    if (!exit) await this.process.terminate(graceMs);
  }

  async kill(): Promise<void> {
    await this.process.terminate(1000);
  }

  private onBytes(bytes: Buffer, modules: Record<string, string>, pendingHello: (m: KernelMessage) => boolean): void {
    if (!this.booted) {
      // Before the bootstrap is ready the tty is still cooked; whatever it
      // prints (an ssh banner, "python3: not found") is kept for the error.
      this.bootOutput = (this.bootOutput + bytes.toString("utf8")).slice(-BOOT_OUTPUT_KEPT);
      const marker = this.bootOutput.indexOf(BOOT_READY_MARKER);
      if (marker === -1) return;
      this.booted = true;
      const after = Buffer.from(this.bootOutput.slice(marker + BOOT_READY_MARKER.length), "utf8");
      this.bootOutput = this.bootOutput.slice(0, marker);
      this.process.write(encodeKernelInput({ nonce: this.nonce, protocol: KERNEL_PROTOCOL_VERSION, modules, entry: KERNEL_ENTRY }));
      if (after.length === 0) return;
      bytes = after;
    }
    for (const piece of this.decoder.push(bytes)) {
      switch (piece.kind) {
        case "raw":
          this.emitText(piece.bytes);
          break;
        case "bad-frame":
          this.events.protocolError(piece.reason);
          break;
        case "frame": {
          const parsed = kernelMessageSchema.safeParse(piece.json);
          if (!parsed.success) {
            this.events.protocolError(`invalid kernel message: ${parsed.error.message.slice(0, 500)}`);
            break;
          }
          if (parsed.data.type === "hello") this.helloSeen = true;
          if (pendingHello(parsed.data)) break;
          this.events.message(parsed.data);
          break;
        }
      }
    }
  }

  private emitText(bytes: Buffer): void {
    const text = this.text.write(bytes);
    if (!this.helloSeen) this.bootOutput = (this.bootOutput + text).slice(-BOOT_OUTPUT_KEPT);
    if (text) this.events.console(text);
  }
}

/** One line of kernel input: base64(JSON) + "\n", as kernel-messages.ts describes. */
export function encodeKernelInput(message: KernelRequest | BootPayload): string {
  return Buffer.from(JSON.stringify(message), "utf8").toString("base64") + "\n";
}

export function describeExit(exit: PtyExit, prefix = "kernel exited"): string {
  return describeKernelExit(exit, prefix);
}
