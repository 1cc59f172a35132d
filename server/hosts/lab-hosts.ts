/**
 * The lab's kernel hosts: one HostAgent per configured host, each named by
 * this lab's id so two labs on one machine never share an agent while a
 * restarted lab finds its own. Gives the notebook runtimes their launchers
 * and the hosts page its view.
 *
 * The hosts file is the truth: a host whose entry fails its check is left
 * out (its notebooks are told why, the hosts page shows its problems) while
 * every other host serves; and a reloaded file (`reload`, on SIGHUP) reaches
 * the running agents, which take its settings where they safely can.
 */
import type { KernelLauncher } from "../kernel/kernel-process";
import { KernelStartError } from "../kernel/kernel-channel";
import type { AgentMessageOf, HostGpu, SettingsNote } from "../core/protocol/agent-messages";
import { DEFAULT_AGENT_BUFFER_BYTES, DEFAULT_INTERRUPT_GRACE_MS, DEFAULT_LEASE_SECONDS } from "../core/protocol/agent-messages";
import type { HolderName, HostView } from "../core/protocol/hosts-model";
import { CommandError } from "../errors";
import type { KernelHosts } from "../notebook/kernel-hosts";
import { agentLauncher, type NameKernels } from "./agent-kernel";
import type { HostConfig, HostProblem } from "./host-config";
import { transportFor } from "./host-transport";
import { agentCode, type AgentBootSettings, type LinkTransport } from "./agent-link";
import { HostAgent, isLinked } from "./host-agent";
import { buildHostView } from "./host-view";
import { errorMessage } from "../core/errors";
import type { Log } from "../logger";

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

interface HostEntry {
  spec: LabHostSpec;
  agent: HostAgent;
  launcher: KernelLauncher;
  checkError: { message: string; at: number } | null;
  /** The reloaded file's entry for it fails its check: it serves on with the settings it had. */
  problem: string[] | null;
  /** Gone from the reloaded file while kernels of this lab still run there: no new kernel starts on it. */
  removed: boolean;
}

/** Whose an agent kernel is, named for the viewer; null: none of this lab's notebooks. */
export type HolderLookup = (agentKernelId: string) => HolderName | null;

/** What a reload of the hosts file did. */
export interface HostsReload {
  added: string[];
  /** Gone from the file; those still running kernels stay until they end (no new kernel starts there). */
  removed: string[];
  keptForKernels: string[];
  /** Hosts whose agent was told the new settings, with its word on them (null: it runs older code and takes them when replaced). */
  reconfigured: Array<{ id: string; notes: SettingsNote[] | null }>;
  /** Entries that fail their check: left out, or serving on with their earlier settings. */
  problems: HostProblem[];
}

/** How long the hosts list waits for a connected agent's fresh health before showing the last one. */
const LIST_HEALTH_WAIT_MS = 2_000;

export class LabHosts implements KernelHosts {
  private readonly agents = new Map<string, HostEntry>();
  /** Entries of the hosts file left out because they fail their check, by id. */
  private excluded = new Map<string, string[]>();
  private names: NameKernels | null = null;
  private defaultHostId: string;

  constructor(
    specs: LabHostSpec[],
    defaultHost: string,
    private readonly labId: string,
    private readonly log: Log,
    problems: HostProblem[] = [],
  ) {
    for (const spec of specs) this.agents.set(spec.id, this.entryFor(spec));
    this.excluded = new Map(problems.map((problem) => [problem.id, problem.errors]));
    this.defaultHostId = defaultHost;
    if (!this.agents.has(defaultHost) && !this.excluded.has(defaultHost)) throw new Error(`the default host "${defaultHost}" is not one of the configured hosts (${[...this.agents.keys()].join(", ")})`);
  }

  get defaultHost(): string {
    return this.defaultHostId;
  }

  /** How the holders of GPUs are named for a notebook (set once the lab's notebooks and access exist). */
  nameKernelsWith(names: NameKernels): void {
    this.names = names;
  }

  private entryFor(spec: LabHostSpec): HostEntry {
    const agent = new HostAgent({ hostId: spec.id, transport: spec.transport, settings: this.bootSettings(spec), log: this.log });
    return { spec, agent, launcher: this.launcherOf(agent, spec), checkError: null, problem: null, removed: false };
  }

  private launcherOf(agent: HostAgent, spec: LabHostSpec): KernelLauncher {
    return agentLauncher(agent, spec.label, this.log, spec.kind === "local", (ids, notebookId) => this.names?.(ids, notebookId) ?? Promise.resolve(new Map()));
  }

  private bootSettings(spec: LabHostSpec): AgentBootSettings {
    return {
      agentId: agentIdFor(spec.id, this.labId),
      leaseSeconds: spec.leaseSeconds,
      bufferBytes: DEFAULT_AGENT_BUFFER_BYTES,
      gpus: spec.gpus,
      whenFull: spec.whenFull,
      interruptGraceMs: spec.interruptGraceMs,
      python: spec.python,
      runtimeDir: spec.runtimeDir,
    };
  }

  launcher(hostId = this.defaultHost): KernelLauncher | undefined {
    const entry = this.agents.get(hostId);
    if (entry) return entry.removed ? refusingLauncher(hostId, `host "${hostId}" was removed from the hosts file; kernels already running there go on until they end. Choose another host under Kernel.`) : entry.launcher;
    const problems = this.excluded.get(hostId);
    // A notebook set to run on a host whose entry fails its check is told why, and what to do.
    if (problems) return refusingLauncher(hostId, `host "${hostId}" is left out of the lab: its entry in the hosts file fails its check (${problems.join("; ")}). Fix the file and reload it (SIGHUP to the lab server), or choose another host under Kernel.`);
    return undefined;
  }

  /**
   * A reloaded hosts file, checked whole before (host-config.ts): new hosts
   * join, removed ones go (or stay while this lab's kernels run there), and
   * every running agent is told the new settings and says what it took and
   * what it kept. An entry that now fails its check leaves its host serving
   * with the settings it had; the problems are shown.
   */
  async reload(specs: LabHostSpec[], defaultHost: string, problems: HostProblem[]): Promise<HostsReload> {
    const report: HostsReload = { added: [], removed: [], keptForKernels: [], reconfigured: [], problems };
    const wanted = new Map(specs.map((spec) => [spec.id, spec]));
    const failing = new Map(problems.map((problem) => [problem.id, problem.errors]));
    for (const [id, entry] of this.agents) {
      if (wanted.has(id)) continue;
      if (failing.has(id)) {
        entry.problem = failing.get(id) ?? null;
        continue;
      }
      if (entry.agent.inUse) {
        entry.removed = true;
        report.keptForKernels.push(id);
        continue;
      }
      this.agents.delete(id);
      report.removed.push(id);
      await entry.agent.detach();
    }
    const told: Array<Promise<void>> = [];
    for (const spec of specs) {
      const entry = this.agents.get(spec.id);
      if (!entry) {
        this.agents.set(spec.id, this.entryFor(spec));
        report.added.push(spec.id);
        continue;
      }
      entry.spec = spec;
      entry.problem = null;
      entry.removed = false;
      entry.launcher = this.launcherOf(entry.agent, spec);
      told.push(
        entry.agent.reconfigure(this.bootSettings(spec), spec.transport).then(
          (notes) => void report.reconfigured.push({ id: spec.id, notes }),
          (error: unknown) => this.log("warning", `host ${spec.id}: its agent was not told the reloaded settings (${errorMessage(error)}); the next link brings them`),
        ),
      );
    }
    await Promise.all(told);
    this.excluded = new Map([...failing].filter(([id]) => !this.agents.has(id)));
    if (this.agents.has(defaultHost) || this.excluded.has(defaultHost)) this.defaultHostId = defaultHost;
    return report;
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

  /** Every host a notebook may name: those that serve, and those left out for their entry's problems (a start there says why). */
  ids(): string[] {
    return [...this.agents.keys(), ...this.excluded.keys()];
  }

  label(hostId: string): string | null {
    return this.agents.get(hostId)?.spec.label ?? null;
  }

  /** The GPUs a host offers: declared in its spec, else as its agent last reported (retiring GPUs not counted); null while unknown. */
  gpuCount(hostId: string): number | null {
    const entry = this.agents.get(hostId);
    if (!entry) return null;
    if (entry.spec.gpus) return entry.spec.gpus.length;
    const health = entry.agent.lastHealth;
    return health ? health.report.gpus.filter((gpu) => gpu.retiring !== true).length : null;
  }

  /**
   * Every host as the hosts page shows it. A connected agent is asked for its
   * health (briefly: a slow answer leaves the last one shown); a host that is
   * not connected is never contacted here: its view is the cached one.
   */
  async view(holderOf: HolderLookup = () => null): Promise<HostView[]> {
    const entries = [...this.agents.values()];
    await Promise.all(entries.filter((entry) => entry.agent.state.state === "connected").map((entry) => this.refresh(entry, LIST_HEALTH_WAIT_MS)));
    return [...entries.map((entry) => this.viewOf(entry, holderOf)), ...[...this.excluded].map(([id, errors]) => leftOutView(id, errors))];
  }

  /**
   * Checks one host now: connects (starting its agent if none runs) and asks
   * its health. An unreachable host gives a view with the error and what the
   * link printed; an unknown id is a CommandError.
   */
  async check(hostId: string, holderOf: HolderLookup = () => null): Promise<HostView> {
    const problems = this.excluded.get(hostId);
    if (problems) return leftOutView(hostId, problems);
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
        entry.checkError = { message: errorMessage(error), at: Date.now() };
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
    const removed = entry.removed ? ["removed from the hosts file: no new kernel starts here; the running ones go on until they end"] : null;
    return buildHostView({
      spec: { id: entry.spec.id, label: entry.spec.label, kind: entry.spec.kind, target: entry.spec.transport.describe() },
      state: entry.agent.state,
      health: lastHealthOf(entry.agent),
      checkError: entry.checkError,
      labCodeHash: labCodeHash(),
      holderOf,
      notes: entry.agent.settingsNotes,
      problem: entry.problem ? [...entry.problem, "it serves on with the settings it had before the reload"] : removed,
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
    await Promise.all([...this.agents.values()].map((entry) => (isLinked(entry.agent.state) ? entry.agent.shutdownAgent() : entry.agent.detach())));
  }
}

/** A launcher that starts nothing and says why (a host left out, or removed from the file). */
function refusingLauncher(id: string, why: string): KernelLauncher {
  return { id, label: id, describe: () => why, start: () => Promise.reject(new KernelStartError(why, "")) };
}

/** A host left out of the lab: its card shows the problems of its entry, and nothing else is known. */
function leftOutView(id: string, problems: string[]): HostView {
  return {
    id,
    label: id,
    kind: "ssh",
    target: "left out: its entry in the hosts file fails its check",
    link: "disconnected",
    error: null,
    errorOutput: null,
    checkedAt: null,
    agent: null,
    python: null,
    torch: null,
    cuda: null,
    probe: null,
    gpuSource: null,
    gpus: [],
    kernels: null,
    queue: [],
    silentSince: null,
    settings: null,
    problem: problems,
  };
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
    transport: { launchArgv: (bootstrap) => [python, "-u", "-c", bootstrap], channel: "pipes", describe: () => `${python} on this machine` },
    python,
    gpus: options.gpus ?? null,
    whenFull: options.whenFull ?? "queue",
    leaseSeconds: options.leaseSeconds ?? DEFAULT_LEASE_SECONDS,
    interruptGraceMs: DEFAULT_INTERRUPT_GRACE_MS,
    runtimeDir: options.runtimeDir ?? null,
  };
}
