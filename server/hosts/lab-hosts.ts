/**
 * The lab's kernel hosts: one HostAgent per configured host, each named by
 * this lab's id so two labs on one machine never share an agent while a
 * restarted lab finds its own. Gives the notebook runtimes their launchers
 * and the hosts page its view.
 */
import type { KernelLauncher } from "../kernel/kernel-process";
import type { AgentMessageOf, HostGpu } from "../core/protocol/agent-messages";
import { DEFAULT_AGENT_BUFFER_BYTES, DEFAULT_INTERRUPT_GRACE_MS, DEFAULT_LEASE_SECONDS } from "../core/protocol/agent-messages";
import type { GpuHolder, HostView } from "../core/protocol/hosts-model";
import { CommandError } from "../errors";
import type { KernelHosts } from "../notebook/kernel-hosts";
import { agentLauncher } from "./agent-kernel";
import type { HostConfig } from "./host-config";
import { transportFor } from "./host-transport";
import { agentCode, type AgentBootSettings, type LinkTransport } from "./agent-link";
import { HostAgent } from "./host-agent";
import { buildHostView } from "./host-view";

/** One host as the lab runs it: how to reach it and what its agent is told. */
export interface LabHostSpec {
  id: string;
  label: string;
  kind: "local" | "ssh" | "slurm";
  transport: LinkTransport;
  python: string | null;
  gpus: HostGpu[] | null;
  whenFull: "queue" | "refuse";
  leaseSeconds: number;
  interruptGraceMs: number;
  runtimeDir: string | null;
}

export type Log = (level: "info" | "warning" | "error", message: string) => void;

interface HostEntry {
  spec: LabHostSpec;
  agent: HostAgent;
  launcher: KernelLauncher;
  checkError: { message: string; at: number } | null;
}

/** Which notebook holds an agent kernel (the hub's runtimes know); null: none of this lab's open notebooks. */
export type HolderLookup = (agentKernelId: string) => GpuHolder | null;

/** How long the hosts list waits for a connected agent's fresh health before showing the last one. */
const LIST_HEALTH_WAIT_MS = 2_000;

export class LabHosts implements KernelHosts {
  private readonly agents = new Map<string, HostEntry>();

  constructor(specs: LabHostSpec[], readonly defaultHost: string, labId: string, log: Log) {
    for (const spec of specs) {
      const settings: AgentBootSettings = {
        agentId: agentIdFor(spec.id, labId),
        leaseSeconds: spec.leaseSeconds,
        bufferBytes: DEFAULT_AGENT_BUFFER_BYTES,
        gpus: spec.gpus,
        whenFull: spec.whenFull,
        interruptGraceMs: spec.interruptGraceMs,
        python: spec.python,
        runtimeDir: spec.runtimeDir,
      };
      const agent = new HostAgent({ hostId: spec.id, transport: spec.transport, settings, log });
      this.agents.set(spec.id, { spec, agent, launcher: agentLauncher(agent, spec.label, log, spec.kind === "local"), checkError: null });
    }
    if (!this.agents.has(defaultHost)) throw new Error(`the default host "${defaultHost}" is not one of the configured hosts (${[...this.agents.keys()].join(", ")})`);
  }

  launcher(hostId = this.defaultHost): KernelLauncher | undefined {
    return this.agents.get(hostId)?.launcher;
  }

  agent(hostId: string): HostAgent | undefined {
    return this.agents.get(hostId)?.agent;
  }

  /** A kernel's GPU utilisation as its host's agent last measured it (idle shutdown reads it). */
  gpuUtilization(hostId: string, agentKernelId: string | null): number | null {
    return agentKernelId === null ? null : (this.agents.get(hostId)?.agent.gpuUtilization(agentKernelId) ?? null);
  }

  /**
   * Health on a schedule: every connected host is asked, every unreachable
   * one is tried again (so the hosts page and GPU use stay current).
   */
  startHealthChecks(intervalMs: number): void {
    if (this.healthTimer) return;
    this.healthTimer = setInterval(() => {
      for (const { agent } of this.agents.values()) {
        if (agent.state.state === "connected" || agent.state.state === "unreachable") agent.health().catch(() => undefined);
      }
    }, intervalMs);
    this.healthTimer.unref();
  }

  private healthTimer: NodeJS.Timeout | null = null;

  specs(): LabHostSpec[] {
    return [...this.agents.values()].map((entry) => entry.spec);
  }

  ids(): string[] {
    return [...this.agents.keys()];
  }

  label(hostId: string): string | null {
    return this.agents.get(hostId)?.spec.label ?? null;
  }

  /** The GPUs a host offers: declared in its spec, else as its agent last reported; null while unknown. */
  gpuCount(hostId: string): number | null {
    const entry = this.agents.get(hostId);
    if (!entry) return null;
    if (entry.spec.gpus) return entry.spec.gpus.length;
    const health = entry.agent.lastHealth;
    return health ? health.report.gpus.length : null;
  }

  /**
   * Every host as the hosts page shows it. A connected agent is asked for its
   * health (briefly: a slow answer leaves the last one shown); a host that is
   * not connected is never contacted here: its view is the cached one.
   */
  async view(holderOf: HolderLookup = () => null): Promise<HostView[]> {
    const entries = [...this.agents.values()];
    await Promise.all(entries.filter((entry) => entry.agent.state.state === "connected").map((entry) => this.refresh(entry, LIST_HEALTH_WAIT_MS)));
    return entries.map((entry) => this.viewOf(entry, holderOf));
  }

  /**
   * Checks one host now: connects (starting its agent if none runs) and asks
   * its health. An unreachable host gives a view with the error and what the
   * link printed; an unknown id is a CommandError.
   */
  async check(hostId: string, holderOf: HolderLookup = () => null): Promise<HostView> {
    const entry = this.agents.get(hostId);
    if (!entry) throw new CommandError("not-found", `no host "${hostId}" in this lab (its hosts: ${this.ids().join(", ")})`);
    await this.refresh(entry, null);
    return this.viewOf(entry, holderOf);
  }

  /** Asks for health; `waitMs` bounds the wait without dropping a late answer (it is kept for the next view). */
  private async refresh(entry: HostEntry, waitMs: number | null): Promise<void> {
    // The agent keeps the answer (lastHealth), as it does for the scheduled checks.
    const asked = entry.agent.health().then(
      () => {
        entry.checkError = null;
      },
      (error: unknown) => {
        entry.checkError = { message: error instanceof Error ? error.message : String(error), at: Date.now() };
      },
    );
    if (waitMs === null) return asked;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await Promise.race([asked, waited]);
    clearTimeout(timer);
  }

  private viewOf(entry: HostEntry, holderOf: HolderLookup): HostView {
    return buildHostView({
      spec: { id: entry.spec.id, label: entry.spec.label, kind: entry.spec.kind, target: entry.spec.transport.describe() },
      state: entry.agent.state,
      health: lastHealthOf(entry.agent),
      checkError: entry.checkError,
      labCodeHash: labCodeHash(),
      holderOf,
    });
  }

  /** The lab server stops: every link closes, every agent keeps its kernels for its lease. */
  async detachAll(): Promise<void> {
    if (this.healthTimer) clearInterval(this.healthTimer);
    await Promise.all([...this.agents.values()].map((entry) => entry.agent.detach()));
  }

  /** Every agent ends with its kernels (tests, and a lab that is told to leave nothing behind). */
  async shutdownAll(): Promise<void> {
    if (this.healthTimer) clearInterval(this.healthTimer);
    await Promise.all([...this.agents.values()].map((entry) => (entry.agent.state.state === "connected" ? entry.agent.shutdownAgent() : entry.agent.detach())));
  }
}

/** The agent's last health answer as the view reads it: an unreachable host still shows what it had. */
function lastHealthOf(agent: HostAgent): { message: AgentMessageOf<"health">; at: number } | null {
  const last = agent.lastHealth;
  return last ? { message: last.report, at: last.at } : null;
}

/** The hash agents started by this lab carry; null when the agent code cannot be read (a broken checkout: said by the check itself). */
function labCodeHash(): string | null {
  try {
    return agentCode().codeHash;
  } catch (error) {
    if (error instanceof Error) return null;
    throw error;
  }
}

/** An agent id: the host's id and this lab's, short enough for a socket path. */
export function agentIdFor(hostId: string, labId: string): string {
  return `${hostId.slice(0, 24)}-${labId.replace(/[^A-Za-z0-9]/g, "").slice(0, 12)}`;
}

/**
 * The specs of the configured hosts. The local host's lease and runtime dir
 * may also come from the server's settings (MGPULAB_KERNEL_LEASE_SECONDS,
 * MGPULAB_AGENT_RUNTIME_DIR), which win over the file's when set.
 */
export function labHostSpecs(hosts: HostConfig[], local: { python?: string; leaseSeconds?: number; runtimeDir?: string }): LabHostSpec[] {
  return hosts.map((host) => {
    const isLocal = host.kind === "local";
    return {
      id: host.id,
      label: host.label,
      kind: host.kind,
      transport: transportFor(host, local.python),
      python: host.python,
      gpus: host.gpus === "auto" ? null : host.gpus === "none" ? [] : host.gpus,
      whenFull: host.whenFull,
      leaseSeconds: isLocal && local.leaseSeconds !== undefined ? local.leaseSeconds : host.leaseSeconds,
      interruptGraceMs: host.interruptGraceMs,
      runtimeDir: isLocal && local.runtimeDir !== undefined ? local.runtimeDir : host.runtimeDir,
    };
  });
}

/** The local host without a hosts file: this machine, its agent a detached local process. */
export function localHostSpec(python: string, options: { leaseSeconds?: number; gpus?: HostGpu[] | null; whenFull?: "queue" | "refuse"; runtimeDir?: string | null } = {}): LabHostSpec {
  return {
    id: "local",
    label: "this machine",
    kind: "local",
    transport: { launchArgv: (bootstrap) => [python, "-u", "-c", bootstrap], describe: () => `${python} on this machine` },
    python,
    gpus: options.gpus ?? null,
    whenFull: options.whenFull ?? "queue",
    leaseSeconds: options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
    interruptGraceMs: DEFAULT_INTERRUPT_GRACE_MS,
    runtimeDir: options.runtimeDir ?? null,
  };
}
