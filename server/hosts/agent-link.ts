/**
 * One link to a host agent: a process running the agent bootstrap on the
 * host (locally on pipes, over `ssh -tt` or through `srun --pty` in a PTY), turned into validated
 * AgentMessages and a `send` for AgentRequests. The link knows nothing of
 * notebooks or kernels' meaning; when it closes, the agent lives on for its
 * lease and a new link resumes (host-agent.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import {
  AGENT_BOOT_READY_MARKER,
  AGENT_PROTOCOL_VERSION,
  agentMessageSchema,
  type AgentBoot,
  type AgentMessage,
  type AgentMessageOf,
  type AgentRequest,
} from "../core/protocol/agent-messages";
import { FrameDecoder } from "../kernel/frame-decoder";
import { KERNELS_DIR, loadKernelBundle } from "../kernel/kernel-bundle";
import { PtyProcess, cleanEnvironment, type PtyExit } from "../kernel/pty-process";
import { PipeProcess, type LinkProcess } from "../kernel/pipe-process";
import { describeExit } from "../kernel/kernel-channel";
import { plainText } from "./terminal-text";

/** What opens the link on a host: host-transport.ts builds one per configured host. */
export interface LinkTransport {
  /** The argv that runs `<python> -u -c <bootstrap>` on the host. */
  launchArgv(bootstrap: string): string[];
  /**
   * "pipes": the argv runs on this machine and needs no terminal (the local
   * agent, which then takes the lab's sockets itself: pipe-process.ts says what that saves); otherwise a PTY
   * (ssh -tt, srun --pty).
   */
  readonly channel?: "pty" | "pipes";
  describe(): string;
}

/** The agent's settings for this host; the nonce, code and protocol are the link's own. */
export type AgentBootSettings = Omit<AgentBoot, "nonce" | "protocol" | "modules" | "codeHash">;

export interface AgentLinkEvents {
  message(message: AgentMessage): void;
  /** Text on the link outside frames (an ssh warning, the relay's last words): logged. */
  text(text: string): void;
  protocolError(reason: string): void;
  closed(reason: string): void;
}

/** A link that did not open: why, and what the host printed (terminal control characters removed from both). */
export class AgentLinkError extends Error {
  readonly output: string;
  constructor(message: string, output: string) {
    super(plainText(message));
    this.output = plainText(output);
  }
}

const OUTPUT_KEPT = 16 * 1024;

export interface AgentCode {
  bootstrap: string;
  modules: Record<string, string>;
  codeHash: string;
}

let cachedCode: AgentCode | null = null;

/** The bootstrap and every package the agent and its kernels import, with one hash over all of it. */
export function agentCode(): AgentCode {
  if (cachedCode) return cachedCode;
  const modules = loadKernelBundle().modules;
  const hash = createHash("sha256");
  for (const name of Object.keys(modules).sort()) hash.update(name).update("\0").update(modules[name]!).update("\0");
  const bootstrap = readFileSync(path.join(KERNELS_DIR, "mgpulab_agent", "bootstrap.py"), "utf8");
  if (bootstrap.includes("'")) throw new Error("kernels/mgpulab_agent/bootstrap.py must not contain single quotes: it travels inside a shell command");
  cachedCode = { bootstrap, modules, codeHash: hash.digest("hex").slice(0, 32) };
  return cachedCode;
}

export class AgentLink {
  private readonly nonce = randomBytes(16).toString("hex");
  private readonly decoder = new FrameDecoder(this.nonce);
  private readonly text = new StringDecoder("utf8");
  private readonly process: LinkProcess;
  private booted = false;
  private helloSeen = false;
  private output = "";
  private closedReason: string | null = null;

  private constructor(
    transport: LinkTransport,
    settings: AgentBootSettings,
    private readonly events: AgentLinkEvents,
    onHello: (hello: AgentMessageOf<"agent_hello">) => void,
    code: AgentCode,
  ) {
    const Process = transport.channel === "pipes" ? PipeProcess : PtyProcess;
    this.process = new Process(
      { argv: transport.launchArgv(code.bootstrap), env: cleanEnvironment() },
      (bytes) => {
        if (!this.booted) {
          // Before the bootstrap is ready, whatever the host prints (an ssh banner, "python3: not found") is kept for the error.
          this.keep(bytes.toString("utf8"));
          const marker = this.output.indexOf(AGENT_BOOT_READY_MARKER);
          if (marker === -1) return;
          this.booted = true;
          const after = Buffer.from(this.output.slice(marker + AGENT_BOOT_READY_MARKER.length), "utf8");
          this.output = this.output.slice(0, marker);
          const boot: AgentBoot = { ...settings, nonce: this.nonce, protocol: AGENT_PROTOCOL_VERSION, modules: code.modules, codeHash: code.codeHash };
          this.process.write(encodeAgentLine(boot));
          if (after.length === 0) return;
          bytes = after;
        }
        for (const piece of this.decoder.push(bytes)) {
          if (piece.kind === "raw") {
            const text = this.text.write(piece.bytes);
            if (!this.helloSeen) this.keep(text);
            if (text) events.text(text);
          } else if (piece.kind === "bad-frame") {
            events.protocolError(piece.reason);
          } else {
            const parsed = agentMessageSchema.safeParse(piece.json);
            if (!parsed.success) {
              events.protocolError(`invalid agent message: ${parsed.error.message.slice(0, 500)}`);
            } else if (parsed.data.type === "agent_hello" && !this.helloSeen) {
              this.helloSeen = true;
              onHello(parsed.data);
            } else {
              events.message(parsed.data);
            }
          }
        }
      },
      (exit) => this.onExit(exit),
    );
  }

  /** Opens the link (starting the agent if none runs) and resolves with its hello. */
  /** `code`: what a new agent is started with (the lab's own, unless a test plays an older lab). */
  static open(
    transport: LinkTransport,
    settings: AgentBootSettings,
    events: AgentLinkEvents,
    timeoutMs = 30_000,
    code: AgentCode = agentCode(),
  ): Promise<{ link: AgentLink; hello: AgentMessageOf<"agent_hello"> }> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let link: AgentLink | null = null;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(new AgentLinkError(`no answer from the host agent within ${timeoutMs} ms (${transport.describe()})`, link?.output ?? ""));
        void link?.close();
      }, timeoutMs);
      link = new AgentLink(
        transport,
        settings,
        {
          ...events,
          closed: (reason) => {
            if (!settled) {
              settled = true;
              clearTimeout(timer);
              reject(new AgentLinkError(`${transport.describe()}: ${reason}`, link?.output ?? ""));
              return;
            }
            events.closed(reason);
          },
        },
        (hello) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (hello.protocol !== AGENT_PROTOCOL_VERSION) {
            reject(new AgentLinkError(`the host agent speaks protocol ${hello.protocol}, this lab ${AGENT_PROTOCOL_VERSION}`, ""));
            void link?.close();
            return;
          }
          resolve({ link: link!, hello });
        },
        code,
      );
    });
  }

  get open(): boolean {
    return this.closedReason === null && !this.process.hasExited;
  }

  /** Process id of the link's local end (ssh, srun, or the local bootstrap, which lives as long as the link). */
  get pid(): number {
    return this.process.pid;
  }

  send(request: AgentRequest): boolean {
    if (!this.open) return false;
    this.process.write(encodeAgentLine(request));
    return true;
  }

  /** Resolves once the link has ended by itself (the agent exited, the host dropped it), or after `timeoutMs`. */
  async ended(timeoutMs: number): Promise<boolean> {
    return (await this.process.waitForExit(timeoutMs)) !== null;
  }

  /** Ends this link only: the agent and its kernels live on for their lease. */
  async close(): Promise<void> {
    await this.process.terminate(1000);
  }

  private keep(text: string): void {
    this.output = (this.output + text).slice(-OUTPUT_KEPT);
  }

  private onExit(exit: PtyExit): void {
    for (const piece of this.decoder.end()) if (piece.kind === "raw") this.events.text(this.text.write(piece.bytes));
    const rest = this.text.end();
    if (rest) this.events.text(rest);
    this.closedReason = describeExit(exit, "the link to the host agent ended");
    const said = plainText(this.output).split("\n").map((line) => line.trim()).filter(Boolean).slice(-3).join(" | ");
    // Before the agent said hello, what the host printed is why (ssh's refusal, the bootstrap's "mgpulab agent: …").
    this.events.closed(said && !this.helloSeen ? `${this.closedReason}: ${said}` : this.closedReason);
  }
}

/** One line for the agent: base64(JSON) + "\n", as agent-messages.ts describes. */
export function encodeAgentLine(message: AgentRequest | AgentBoot): string {
  return Buffer.from(JSON.stringify(message), "utf8").toString("base64") + "\n";
}
