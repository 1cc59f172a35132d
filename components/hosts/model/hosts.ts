/**
 * The hosts page: every configured kernel host, refreshed while the page is
 * open, with a "Check now" per host. What each card says is computed here by
 * pure functions (hostCard), so the component only renders.
 */
import { describeHolder, formatUptime, gpuCountLabel, shortGpuId, type GpuUserView, type HostView } from "../../../server/core/protocol/hosts-model";
import type { LabReply } from "../../../server/core/protocol/ops-lab";
import { assertNever } from "../../../server/core/assert-never";
import type { LabTransport } from "../../shell/model/lab-client";
import { formatClock } from "../../shell/model/format";
import { PolledPage } from "../../shell/model/polling-store";

export interface HostsState {
  status: "loading" | "ready" | "error";
  hosts: readonly HostView[] | null;
  error: string | null;
  /** Host ids being checked now (their buttons say so). */
  checking: readonly string[];
}

type HostsReply = LabReply<"list-hosts">;

export class HostsController extends PolledPage<HostsState, HostsReply> {
  constructor(
    private readonly transport: LabTransport,
    pollMs = 5_000,
  ) {
    super(transport, { status: "loading", hosts: null, error: null, checking: [] }, { what: "Loading the hosts", fetch: () => transport.send({ op: "list-hosts" }), apply: (reply) => ({ hosts: reply.hosts, error: null }), pollMs });
  }

  /** Connects to the host now and asks its health; its card shows the answer, or why it is unreachable. */
  async check(hostId: string): Promise<boolean> {
    this.store.update({ checking: [...this.getState().checking, hostId] });
    const ack = await this.transport.send({ op: "check-host", hostId });
    this.store.supersede(); // a list asked before this answer is older than it
    this.store.update({ checking: this.getState().checking.filter((id) => id !== hostId) });
    if (!ack.ok) {
      this.store.fail(`Checking ${hostId}`, ack);
      return false;
    }
    const fresh = ack.host;
    const hosts = this.getState().hosts ?? [];
    const known = hosts.some((host) => host.id === fresh.id);
    this.store.update({ status: "ready", hosts: known ? hosts.map((host) => (host.id === fresh.id ? fresh : host)) : [...hosts, fresh] });
    return true;
  }

}

/** A kernel holding or waiting for GPUs, in words: who (the notebook only where the viewer may read it), a link to it, since when. */
export interface UserCell {
  who: string;
  href: string | null;
  gpus: number;
  since: string | null;
}

/** One GPU row, in words. */
export interface GpuRow {
  index: number;
  name: string;
  shortUuid: string;
  uuid: string;
  memory: string;
  utilization: string;
  heldBy: UserCell | null;
  /** Free but kept for the first in the queue: "reserved for Ana's 'DDP sweep' (needs 2)". */
  reserved: { text: string; href: string | null } | null;
  /** No longer in the hosts file; goes when its holder ends. */
  retiring: boolean;
}

/** One host card, in words. */
export interface HostCard {
  id: string;
  label: string;
  kindAndTarget: string;
  link: HostView["link"];
  linkLabel: string;
  checked: string;
  error: string | null;
  errorOutput: string | null;
  /** "pid 4242 · up 3 min · runs the lab's code", or null without an agent. */
  agent: string | null;
  agentSameCode: boolean | null;
  software: string;
  gpuSummary: string;
  gpus: GpuRow[];
  kernels: string;
  /** The GPU queue, first come first served: who, how many GPUs, since when. */
  queue: Array<UserCell & { place: number }>;
  /** What the agent said of the hosts file's settings: taken, or kept and why. */
  settingsNotes: Array<{ applied: boolean; text: string }>;
  /** The host's entry fails its check: every problem. */
  problem: string[] | null;
}

const KIND_LABEL: Record<HostView["kind"], string> = { local: "local", ssh: "SSH", slurm: "Slurm" };

/** A holder or a waiting kernel as a cell of the hosts page. */
export function userCell(user: GpuUserView): UserCell {
  return {
    who: describeHolder(user),
    href: user.notebookId === null ? null : `/notebooks/${encodeURIComponent(user.notebookId)}`,
    gpus: user.gpus,
    since: user.since === null ? null : formatClock(user.since),
  };
}

export function hostCard(view: HostView, now: number): HostCard {
  const stalledFor = view.silentSince === null ? null : Math.max(0, Math.round((now - view.silentSince) / 1000));
  return {
    id: view.id,
    label: view.label,
    // A host left out has no transport the lab built: its card says only why.
    kindAndTarget: view.problem !== null && view.agent === null && view.link === "disconnected" ? view.target : `${KIND_LABEL[view.kind]} · ${view.target}`,
    link: view.link,
    linkLabel: view.problem !== null && view.link === "disconnected" ? "left out" : stalledFor !== null ? `stalled: no answer for ${stalledFor} s` : linkLabel(view.link),
    checked: view.checkedAt === null ? "never checked" : `checked ${ago(now - view.checkedAt)}`,
    error: view.error,
    errorOutput: view.errorOutput,
    agent: agentLine(view, now),
    agentSameCode: view.agent?.sameCodeAsLab ?? null,
    software: softwareLine(view),
    gpuSummary: gpuSummary(view),
    gpus: view.gpus.map(gpuRow),
    kernels: view.kernels === null ? "kernels: not known yet" : `${view.kernels.running} running · ${view.kernels.queued} queued for GPUs`,
    queue: view.queue.map((user, index) => ({ ...userCell(user), place: index + 1 })),
    settingsNotes: [
      ...(view.settings?.notes ?? []).map(({ applied, message }) => ({ applied, text: `took from the hosts file: ${message}` })),
      ...(view.settings?.kept ?? []).map((text) => ({ applied: false, text: `kept: ${text}` })),
    ],
    problem: view.problem,
  };
}

function linkLabel(link: HostView["link"]): string {
  switch (link) {
    case "connected":
      return "connected";
    case "stalled":
      return "stalled";
    case "connecting":
      return "connecting…";
    case "unreachable":
      return "unreachable";
    case "disconnected":
      return "not connected";
    default:
      return assertNever(link);
  }
}

function ago(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 5 ? "just now" : `${formatUptime(seconds)} ago`;
}

function agentLine(view: HostView, now: number): string | null {
  const agent = view.agent;
  if (agent === null) return null;
  // Uptime as of the answer, moved on by the time since.
  const uptime = agent.uptimeSeconds + (view.checkedAt === null ? 0 : Math.max(0, now - view.checkedAt) / 1000);
  const code = agent.sameCodeAsLab ? "runs the lab's code" : "runs other code: replaced when its kernels end";
  const links = agent.links === null ? "" : ` · ${agent.links} ${agent.links === 1 ? "lab link" : "lab links"}`;
  return `agent pid ${agent.pid} · up ${formatUptime(uptime)} · lease ${formatUptime(agent.leaseSeconds)}${links} · ${code}`;
}

function softwareLine(view: HostView): string {
  if (view.python === null) return view.checkedAt === null ? "Python, torch, CUDA: not checked yet" : "Python, torch, CUDA: not known";
  const probing = view.probe === "pending";
  const torch = view.torch ?? (probing ? "probing…" : view.probe === "failed" ? "probe failed" : "not installed");
  const cuda = view.cuda ?? (probing ? "probing…" : "none");
  return `Python ${view.python} · torch ${torch} · CUDA ${cuda}`;
}

function gpuSummary(view: HostView): string {
  switch (view.gpuSource) {
    case null:
      return "GPUs: not known yet";
    case "none":
      return "no GPU found (kernels run on the CPU)";
    case "declared":
      return `${gpuCountLabel(view.gpus.length)}, as the hosts file declares`;
    case "nvml":
      return `${gpuCountLabel(view.gpus.length)} (NVML)`;
    case "nvidia-smi":
      return `${gpuCountLabel(view.gpus.length)} (nvidia-smi)`;
    default:
      return assertNever(view.gpuSource);
  }
}

function gpuRow(gpu: HostView["gpus"][number]): GpuRow {
  const total = gpu.memoryTotalMiB;
  const used = gpu.memoryUsedMiB;
  const memory = total === null && used === null ? "—" : `${used === null ? "?" : formatMiB(used)} / ${total === null ? "?" : formatMiB(total)}`;
  return {
    index: gpu.index,
    name: gpu.name || "unnamed",
    shortUuid: shortGpuId(gpu.uuid),
    uuid: gpu.uuid,
    memory,
    utilization: gpu.utilization === null ? "—" : `${Math.round(gpu.utilization)} %`,
    heldBy: gpu.heldBy === null ? null : userCell(gpu.heldBy),
    reserved: gpu.reservedFor === null ? null : { text: `reserved for ${describeHolder(gpu.reservedFor)} (needs ${gpu.reservedFor.gpus})`, href: userCell(gpu.reservedFor).href },
    retiring: gpu.retiring,
  };
}

/** 81559 → "79.6 GiB", 512 → "512 MiB". */
export function formatMiB(mib: number): string {
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`;
}
