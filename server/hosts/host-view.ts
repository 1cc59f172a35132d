/**
 * One host's HostView from what the lab knows of it: its spec, its agent's
 * link state, the agent's last health answer (kept across a drop, so an
 * unreachable host still shows what it had), the last failed check, and
 * which notebook each agent kernel belongs to. Pure: tested without an agent.
 */
import type { AgentMessageOf, GpuUse, SettingsNote } from "../core/protocol/agent-messages";
import { describeHolder, UNKNOWN_HOLDER, type GpuUserView, type HolderName, type HostAgentView, type HostKind, type HostView } from "../core/protocol/hosts-model";
import type { HostLinkState } from "./host-agent";
import { plainText } from "./terminal-text";

export interface HostFacts {
  spec: { id: string; label: string; kind: HostKind; target: string };
  state: HostLinkState;
  /** The last health answer and when it came (epoch ms). */
  health: { message: AgentMessageOf<"health">; at: number } | null;
  /** The last check that failed while the link was up (a health request timed out). */
  checkError: { message: string; at: number } | null;
  /** The hash of the code this lab starts agents with; null when the lab cannot read its agent code. */
  labCodeHash: string | null;
  /** Whose an agent kernel is, named for the viewer; null when none of this lab's notebooks owns it. */
  holderOf: (agentKernelId: string) => HolderName | null;
  /** What the agent said of the hosts file's settings on the last link or reload. */
  notes?: readonly SettingsNote[];
  /** The host's entry failed its check: it was left out, and these are its problems. */
  problem?: string[] | null;
}

export function buildHostView(facts: HostFacts): HostView {
  const { spec, state, health, checkError } = facts;
  const message = health?.message ?? null;
  const unreachable = state.state === "unreachable" ? state : null;
  const failedLater = checkError !== null && (health === null || checkError.at > health.at) ? checkError : null;
  const checkedAt = Math.max(health?.at ?? 0, unreachable?.at ?? 0, failedLater?.at ?? 0);
  const named = (use: GpuUse): GpuUserView => ({ ...(facts.holderOf(use.kernel) ?? UNKNOWN_HOLDER), gpus: use.gpus, since: use.since });
  // How many GPUs each holder has, and since when: a holder's row names its whole share.
  const held = new Map<string, GpuUse>();
  for (const gpu of message?.gpus ?? []) {
    if (gpu.kernel === null) continue;
    const seen = held.get(gpu.kernel);
    held.set(gpu.kernel, { kernel: gpu.kernel, gpus: (seen?.gpus ?? 0) + 1, since: seen?.since ?? gpu.since ?? null });
  }
  const queue = message?.queue ?? [];
  const error = unreachable?.error ?? failedLater?.message ?? null;
  return {
    id: spec.id,
    label: spec.label,
    kind: spec.kind,
    target: spec.target,
    link: state.state,
    error: error === null ? null : plainText(error).trim(),
    errorOutput: unreachable && plainText(unreachable.output).trim() !== "" ? plainText(unreachable.output).trim() : null,
    checkedAt: checkedAt === 0 ? null : checkedAt,
    agent: agentView(state, message, facts.labCodeHash),
    python: message?.python || null,
    torch: message?.torch ?? null,
    cuda: message?.cuda ?? null,
    probe: message?.probe ?? null,
    gpuSource: message?.gpuSource ?? null,
    gpus: (message?.gpus ?? []).map(({ gpu, memoryUsedMiB, utilization, kernel, reservedFor, retiring }) => {
      const head = reservedFor === undefined ? undefined : queue.find((use) => use.kernel === reservedFor);
      return {
        index: gpu.index,
        uuid: gpu.uuid,
        name: gpu.name,
        memoryTotalMiB: gpu.memoryTotalMiB,
        memoryUsedMiB,
        utilization,
        heldBy: kernel === null ? null : named(held.get(kernel) ?? { kernel, gpus: 1, since: null }),
        reservedFor: reservedFor === undefined ? null : named(head ?? { kernel: reservedFor, gpus: 0, since: null }),
        retiring: retiring === true,
      };
    }),
    // The agent's `kernels` counts those it runs; `queued` those waiting for GPUs.
    kernels: message ? { running: message.kernels, queued: message.queued } : null,
    queue: queue.map(named),
    silentSince: state.state === "stalled" ? state.silentSince : null,
    settings: settingsView(facts.notes ?? [], message, facts.holderOf),
    problem: facts.problem ?? null,
  };
}

/**
 * What the agent took from the hosts file (its own words), and what it keeps
 * against it now, with the holder named as the viewer may see it (the agent
 * knows only kernel ids).
 */
function settingsView(notes: readonly SettingsNote[], health: AgentMessageOf<"health"> | null, holderOf: HostFacts["holderOf"]): HostView["settings"] {
  const taken = notes.filter((note) => note.applied).map(({ applied, message }) => ({ applied, message }));
  const kept = (health?.gpus ?? [])
    .filter((gpu) => gpu.retiring === true)
    .map((gpu) => `GPU ${gpu.gpu.index} (${gpu.gpu.uuid}) is no longer in the hosts file; ${gpu.kernel === null ? "a kernel" : describeHolder(holderOf(gpu.kernel) ?? UNKNOWN_HOLDER)} holds it, so it stays until that kernel ends`);
  return taken.length > 0 || kept.length > 0 ? { notes: taken, kept } : null;
}

/**
 * The agent as the last health answer describes it; before any answer (or
 * once a newer link said hello), the hello of the open link.
 */
function agentView(state: HostLinkState, health: AgentMessageOf<"health"> | null, labCodeHash: string | null): HostAgentView | null {
  const hello = state.state === "connected" || state.state === "stalled" ? state.hello : null;
  const same = (codeHash: string) => labCodeHash !== null && codeHash === labCodeHash;
  if (health && (!hello || hello.pid === health.pid)) {
    return { pid: health.pid, uptimeSeconds: health.uptimeSeconds, codeHash: health.codeHash, sameCodeAsLab: same(health.codeHash), leaseSeconds: health.leaseSeconds, links: health.links };
  }
  if (!hello) return null;
  return {
    pid: hello.pid,
    uptimeSeconds: Math.max(0, (Date.now() - hello.startedAt) / 1000),
    codeHash: hello.codeHash,
    sameCodeAsLab: same(hello.codeHash),
    leaseSeconds: hello.leaseSeconds,
    links: null,
  };
}
