/**
 * What the notebook header says of where its kernel runs: the kernel spec
 * control's label and limits, the host and leased GPUs of the running kernel,
 * and its place in a host's GPU queue. Pure, tested without a browser.
 */
import { describeLeasedGpus, gpuCountLabel, hostGpuCount, type HostView } from "../../server/core/protocol/hosts-model";
import type { KernelInfo, KernelSpec, KernelStatus } from "../../server/core/protocol/notebook-model";

/** The most GPUs the form offers when the host's count is not known. */
export const MAX_FORM_GPUS = 1024;

function hostLabel(hostId: string, hosts: readonly HostView[] | null): string {
  return hosts?.find((host) => host.id === hostId)?.label ?? hostId;
}

/** "Kernel: this machine · no GPU", "Kernel: gpu1 · 2 GPUs". */
export function kernelSpecLabel(spec: KernelSpec, hosts: readonly HostView[] | null): string {
  return `Kernel: ${hostLabel(spec.hostId, hosts)} · ${gpuCountLabel(spec.gpus)}`;
}

/** The GPUs a kernel on this host may ask for: its count when known, else the protocol's bound. */
export function maxGpusOn(hostId: string, hosts: readonly HostView[] | null): number {
  const host = hosts?.find((candidate) => candidate.id === hostId);
  return host ? (hostGpuCount(host) ?? MAX_FORM_GPUS) : MAX_FORM_GPUS;
}

/** A kernel is running (or on its way): a new spec waits for the next restart. */
export function specAppliesLater(state: KernelStatus["state"]): boolean {
  return state === "starting" || state === "idle" || state === "busy" || state === "interrupting" || state === "restarting";
}

/** "on gpu1" and the leased GPUs ("A100 GPU-1a2b…, GPU-3c4d…") with every UUID in full for a title. */
export function kernelPlacementText(info: KernelInfo, hosts: readonly HostView[] | null): { host: string | null; gpus: { text: string; title: string } | null } {
  const host = info.host ? `on ${info.host.label}` : null;
  const leased = info.gpus ?? [];
  if (leased.length === 0) return { host, gpus: null };
  const known = hosts?.find((candidate) => candidate.id === info.host?.id)?.gpus ?? [];
  return { host, gpus: describeLeasedGpus(leased, known) };
}

/** "waiting for 2 GPUs on gpu1: #3 in the queue" while a start waits for GPUs; null otherwise. */
export function queueText(status: KernelStatus): string | null {
  if (status.state !== "starting" || !status.queue) return null;
  const { position, host, gpus } = status.queue;
  return `waiting for ${gpuCountLabel(gpus)} on ${host}: #${position} in the queue`;
}
