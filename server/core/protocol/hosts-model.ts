/**
 * The hosts page's model: each configured kernel host as the lab sees it
 * (its link, its agent, what its interpreter has, its GPUs and who holds
 * them). Built by the server (hosts/host-view.ts) from the agent's state and
 * its last `health`; read by the hosts page and the notebook header. Pure
 * types and formatting: the browser imports this module.
 */

export type HostKind = "local" | "ssh" | "slurm";

/** The link to the host's agent, as HostAgent's state says ("stalled": open, but silent). */
export type HostLink = "connected" | "stalled" | "connecting" | "unreachable" | "disconnected";

/** The notebook whose kernel holds a GPU (the lab's own map, over every server): before it is shown, it is named for the viewer. */
export interface GpuHolder {
  notebookId: string;
  title: string;
}

/**
 * Whose kernel an agent kernel is, as one viewer may see it: the person
 * always (the GPU is everyone's business), the notebook only where the viewer
 * may read it. All null: not this lab's kernel (another lab's, or one a
 * previous server left).
 */
export interface HolderName {
  owner: string | null;
  notebookId: string | null;
  title: string | null;
}

export const UNKNOWN_HOLDER: HolderName = { owner: null, notebookId: null, title: null };

/** A kernel holding GPUs or waiting for them, named for the viewer. */
export interface GpuUserView extends HolderName {
  gpus: number;
  /** Epoch ms: since when it holds them, or waits; null when unknown. */
  since: number | null;
}

export interface HostGpuView {
  index: number;
  uuid: string;
  name: string;
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  /** Percent, at the agent's last sample; null without NVML. */
  utilization: number | null;
  heldBy: GpuUserView | null;
  /** Free, but kept for the first in the queue, which needs more GPUs than are free. */
  reservedFor: GpuUserView | null;
  /** No longer in the hosts file; kept until the kernel holding it ends. */
  retiring: boolean;
}

export interface HostAgentView {
  pid: number;
  /** As of `checkedAt` (or the hello, before any health answer). */
  uptimeSeconds: number;
  codeHash: string;
  /** The agent runs the code this lab would start it with; otherwise it is replaced when its kernels end. */
  sameCodeAsLab: boolean;
  leaseSeconds: number;
  /** Lab servers linked to it now; null until it has answered a health request. */
  links: number | null;
}

export interface HostView {
  id: string;
  label: string;
  kind: HostKind;
  /** How the lab reaches it (the transport's own words: "user@gpu1 over ssh"). */
  target: string;
  link: HostLink;
  /** Why the host is unreachable or the last check failed; null when it answered. */
  error: string | null;
  /** What the link printed before it failed (ssh's "Permission denied", "python3: not found"). */
  errorOutput: string | null;
  /** Epoch ms of the last health answer or failed check; null when never checked. */
  checkedAt: number | null;
  agent: HostAgentView | null;
  /** null while unknown (never checked, or the probe is pending). */
  python: string | null;
  torch: string | null;
  cuda: string | null;
  /** The agent's probe of torch/CUDA (importing torch takes seconds): "pending" shows as "probing…". */
  probe: "pending" | "done" | "failed" | null;
  gpuSource: "nvml" | "nvidia-smi" | "declared" | "none" | null;
  gpus: HostGpuView[];
  /** Kernels the agent runs and queues for GPUs; null until it has answered a health request. */
  kernels: { running: number; queued: number } | null;
  /** The GPU queue, first come first served (empty when none waits, or the agent does not say). */
  queue: GpuUserView[];
  /** Since when the open link has been silent (epoch ms), while it is stalled; else null. */
  silentSince: number | null;
  /** What the agent said of the hosts file's settings (taken, or kept and why), and what it keeps against them now. */
  settings: { notes: Array<{ applied: boolean; message: string }>; kept: string[] } | null;
  /** The host's entry fails its check, so the lab left it out: every problem, naming the file and the field. */
  problem: string[] | null;
}

/** Why a kernel has no GPUs yet, named for the notebook's viewers (README "GPU hosts"). */
export interface GpuWaitView {
  /** The host's label. */
  host: string;
  asked: number;
  free: number;
  total: number;
  holders: GpuUserView[];
  /** Who waits before it, first come first served. */
  ahead: GpuUserView[];
}

/**
 * A wait in words: "no GPU free on gpu1: 2 asked, 1 free; held by Ana's
 * 'DDP sweep' since 10:02". `at` writes a time (the browser's clock and
 * zone); without it, no times.
 */
export function describeGpuWait(wait: GpuWaitView, at?: (epochMs: number) => string): string {
  if (wait.asked > wait.total) return `${wait.host} has ${gpuCountLabel(wait.total)}: this kernel asks for ${wait.asked}; ask for fewer under Kernel`;
  const since = (use: GpuUserView) => (use.since !== null && at ? ` since ${at(use.since)}` : "");
  const parts = [`no GPU free on ${wait.host}: ${wait.asked} asked, ${wait.free} free`];
  if (wait.holders.length > 0) parts.push(`held by ${wait.holders.map((holder) => `${describeHolder(holder)}${since(holder)}`).join(", ")}`);
  if (wait.ahead.length > 0) parts.push(`first in line: ${wait.ahead.map((user) => `${describeHolder(user)} (needs ${user.gpus})`).join(", ")}`);
  return parts.join("; ");
}

/** "Ana's 'DDP sweep'", "Ana's notebook", or "another lab or a previous run". */
export function describeHolder(holder: HolderName): string {
  if (holder.owner === null) return holder.title === null ? "another lab or a previous run" : `'${holder.title}'`;
  return holder.title === null ? `${holder.owner}'s notebook` : `${holder.owner}'s '${holder.title}'`;
}

/** "GPU-1a2b3c4d-…" → "GPU-1a2b…": short enough for a header; the full UUID goes in a title. */
export function shortGpuId(uuid: string): string {
  const match = /^(GPU|MIG)-([0-9a-fA-F]{4})/.exec(uuid);
  if (match) return uuid.length > match[0].length ? `${match[1]}-${match[2]}…` : uuid;
  return uuid.length > 12 ? `${uuid.slice(0, 10)}…` : uuid;
}

/** "1 GPU", "2 GPUs", "no GPU". */
export function gpuCountLabel(count: number): string {
  return count === 0 ? "no GPU" : `${count} ${count === 1 ? "GPU" : "GPUs"}`;
}

/** The GPUs a host offers, when known: what a notebook may ask for at most. */
export function hostGpuCount(view: HostView): number | null {
  if (view.gpuSource === null) return null;
  return view.gpus.length;
}

/**
 * The leased GPUs in a header: "A100 GPU-1a2b…, GPU-3c4d…" with names when
 * the hosts list knows them, and every UUID in full for a title.
 */
export function describeLeasedGpus(uuids: readonly string[], known: readonly HostGpuView[] = []): { text: string; title: string } {
  const byUuid = new Map(known.map((gpu) => [gpu.uuid, gpu]));
  const parts = uuids.map((uuid) => {
    const gpu = byUuid.get(uuid);
    return gpu && gpu.name ? `${gpu.name} ${shortGpuId(uuid)}` : shortGpuId(uuid);
  });
  const title = uuids.map((uuid) => {
    const gpu = byUuid.get(uuid);
    return gpu ? `GPU ${gpu.index}: ${gpu.name || "unnamed"} (${uuid})` : uuid;
  });
  return { text: parts.join(", "), title: title.join("\n") };
}

/** "3 d 4 h", "12 min", "40 s": how long an agent has run. */
export function formatUptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}
