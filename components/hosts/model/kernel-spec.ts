/**
 * What the notebook header says of where its kernel runs: the kernel spec
 * control's label and limits, the host and leased GPUs of the running kernel,
 * and its place in a host's GPU queue. Pure, tested without a browser.
 */
import { describeGpuWait, describeHolder, describeLeasedGpus, gpuCountLabel, hostGpuCount, type GpuUserView, type HostView } from "../../../server/core/protocol/hosts-model";
import type { KernelInfo, KernelSpec, KernelStatus } from "../../../server/core/protocol/notebook-model";
import { formatClock } from "../../shell/model/format";

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

/**
 * While a start waits for GPUs: its place, whom it waits behind, who holds
 * the GPUs since when, and why a free GPU is not its ("waiting for 1 GPU on
 * gpu1: #2 in the queue, behind Ana's 'DDP sweep' (needs 2); held by Bob's
 * notebook since 10:02; the 1 free GPU is reserved for the first in line").
 * Null otherwise.
 */
export function queueText(status: KernelStatus, clock: (epochMs: number) => string = formatClock): string | null {
  if (status.state !== "starting" || !status.queue) return null;
  const { position, host, gpus, wait } = status.queue;
  const parts = [`waiting for ${gpuCountLabel(gpus)} on ${host}: #${position} in the queue`];
  if (!wait) return parts[0]!;
  const since = (user: GpuUserView) => (user.since === null ? "" : ` since ${clock(user.since)}`);
  if (wait.ahead.length > 0) parts[0] += `, behind ${wait.ahead.map((user) => `${describeHolder(user)} (needs ${user.gpus})`).join(", ")}`;
  if (wait.holders.length > 0) parts.push(`held by ${wait.holders.map((user) => `${describeHolder(user)}${since(user)}`).join(", ")}`);
  if (wait.free > 0 && wait.ahead.length > 0) parts.push(`the ${wait.free} free ${wait.free === 1 ? "GPU is" : "GPUs are"} reserved for the first in line`);
  return parts.join("; ");
}

/** Why the host refused the kernel, with who holds the GPUs since when; null unless refused. */
export function refusalText(status: KernelStatus, clock: (epochMs: number) => string = formatClock): string | null {
  return status.state === "refused" ? describeGpuWait(status.wait, clock) : null;
}

/** The kernel's link does not answer: said until it does ("no answer from gpu1 since 10:02:13…"); null otherwise. */
export function linkTroubleText(status: KernelStatus, clock: (epochMs: number) => string = (ms) => formatClock(ms, { seconds: true })): string | null {
  if (status.state !== "idle" && status.state !== "busy" && status.state !== "interrupting") return null;
  const trouble = status.link;
  if (!trouble) return null;
  return trouble.state === "stalled"
    ? `no answer from ${trouble.host} since ${clock(trouble.since)}: the kernel may well be running on; the lab reconnects if the link stays silent`
    : `the link to ${trouble.host} dropped at ${clock(trouble.since)}: reconnecting (the kernel keeps running on its host)`;
}
