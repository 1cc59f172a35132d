/**
 * One host's HostView from what the lab knows of it: its spec, its agent's
 * link state, the agent's last health answer (kept across a drop, so an
 * unreachable host still shows what it had), the last failed check, and
 * which notebook each agent kernel belongs to. Pure: tested without an agent.
 */
import type { AgentMessageOf } from "../core/protocol/agent-messages";
import { UNKNOWN_HOLDER, type GpuHolder, type HostAgentView, type HostKind, type HostView } from "../core/protocol/hosts-model";
import type { HostLinkState } from "./host-agent";

export interface HostFacts {
  spec: { id: string; label: string; kind: HostKind; target: string };
  state: HostLinkState;
  /** The last health answer and when it came (epoch ms). */
  health: { message: AgentMessageOf<"health">; at: number } | null;
  /** The last check that failed while the link was up (a health request timed out). */
  checkError: { message: string; at: number } | null;
  /** The hash of the code this lab starts agents with; null when the lab cannot read its agent code. */
  labCodeHash: string | null;
  /** The notebook of an agent kernel of this lab; null when none of its open notebooks owns it. */
  holderOf: (agentKernelId: string) => GpuHolder | null;
}

export function buildHostView(facts: HostFacts): HostView {
  const { spec, state, health, checkError } = facts;
  const message = health?.message ?? null;
  const unreachable = state.state === "unreachable" ? state : null;
  const failedLater = checkError !== null && (health === null || checkError.at > health.at) ? checkError : null;
  const checkedAt = Math.max(health?.at ?? 0, unreachable?.at ?? 0, failedLater?.at ?? 0);
  return {
    id: spec.id,
    label: spec.label,
    kind: spec.kind,
    target: spec.target,
    link: state.state,
    error: unreachable?.error ?? failedLater?.message ?? null,
    errorOutput: unreachable && unreachable.output.trim() !== "" ? unreachable.output : null,
    checkedAt: checkedAt === 0 ? null : checkedAt,
    agent: agentView(state, message, facts.labCodeHash),
    python: message?.python || null,
    torch: message?.torch ?? null,
    cuda: message?.cuda ?? null,
    probe: message?.probe ?? null,
    gpuSource: message?.gpuSource ?? null,
    gpus: (message?.gpus ?? []).map(({ gpu, memoryUsedMiB, utilization, kernel }) => ({
      index: gpu.index,
      uuid: gpu.uuid,
      name: gpu.name,
      memoryTotalMiB: gpu.memoryTotalMiB,
      memoryUsedMiB,
      utilization,
      heldBy: kernel === null ? null : (facts.holderOf(kernel) ?? UNKNOWN_HOLDER),
    })),
    // The agent's `kernels` counts those it runs; `queued` those waiting for GPUs.
    kernels: message ? { running: message.kernels, queued: message.queued } : null,
  };
}

/**
 * The agent as the last health answer describes it; before any answer (or
 * once a newer link said hello), the hello of the open link.
 */
function agentView(state: HostLinkState, health: AgentMessageOf<"health"> | null, labCodeHash: string | null): HostAgentView | null {
  const hello = state.state === "connected" ? state.hello : null;
  const same = (codeHash: string) => labCodeHash !== null && codeHash === labCodeHash;
  if (health && (!hello || hello.pid === health.pid)) {
    return { pid: health.pid, uptimeSeconds: health.uptimeSeconds, codeHash: health.codeHash, sameCodeAsLab: same(health.codeHash), leaseSeconds: health.leaseSeconds, links: health.links };
  }
  if (!hello || state.state !== "connected") return null;
  return {
    pid: hello.pid,
    uptimeSeconds: Math.max(0, (Date.now() - hello.startedAt) / 1000),
    codeHash: hello.codeHash,
    sameCodeAsLab: same(hello.codeHash),
    leaseSeconds: hello.leaseSeconds,
    links: null,
  };
}
