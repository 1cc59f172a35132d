/**
 * The hosts page's model: each configured kernel host as the lab sees it
 * (its link, its agent, what its interpreter has, its GPUs and who holds
 * them). Built by the server (hosts/host-view.ts) from the agent's state and
 * its last `health`; read by the hosts page and the notebook header. Pure
 * types and formatting: the browser imports this module.
 */

export type HostKind = "local" | "ssh" | "slurm";

/** The link to the host's agent, as HostAgent's state says. */
export type HostLink = "connected" | "connecting" | "unreachable" | "disconnected";

/** The notebook whose kernel holds a GPU; `notebookId` "" when the kernel is not this lab's (UNKNOWN_HOLDER). */
export interface GpuHolder {
  notebookId: string;
  title: string;
}

/** A kernel the agent runs that no open notebook of this lab owns: another lab's, or one a previous server left. */
export const UNKNOWN_HOLDER: GpuHolder = { notebookId: "", title: "another lab or a previous run" };

export interface HostGpuView {
  index: number;
  uuid: string;
  name: string;
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  /** Percent, at the agent's last sample; null without NVML. */
  utilization: number | null;
  heldBy: GpuHolder | null;
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
