/**
 * The parts of a host agent's link, each on its own (server/hosts/): requests
 * paired with answers and a waiting start's state mail (agent-requests.ts),
 * output routed once per sequence number and kernels relinked or gone
 * (kernel-routes.ts), the heartbeat's thresholds (link-heartbeat.ts), the
 * reconnect pauses (reconnect-backoff.ts), the verdict on an agent running
 * other code (agent-code-verdict.ts), the agent's word on its settings
 * (agent-settings-state.ts) and its kernels' GPU use (agent-gpu-use.ts). The
 * whole agent over real links is tests/integration/host*.test.ts,
 * remote-hosts, agent-code-version and gpu-slots.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentKernel } from "../../server/core/protocol/agent-messages";
import { AgentRequests, HostAgentError, type Answer } from "../../server/hosts/agent-requests";
import { KernelRoutes, type AgentKernelHandlers } from "../../server/hosts/kernel-routes";
import { FAIL_AFTER_MS, LinkHeartbeat, PING_AFTER_MS, STALL_AFTER_MS } from "../../server/hosts/link-heartbeat";
import { RECONNECT_DELAYS_MS, ReconnectBackoff } from "../../server/hosts/reconnect-backoff";
import { codeVerdict } from "../../server/hosts/agent-code-verdict";
import { AgentSettingsState } from "../../server/hosts/agent-settings-state";
import { AgentGpuUse } from "../../server/hosts/agent-gpu-use";
import type { LinkedState } from "../../server/hosts/host-link-state";
import type { AgentBootSettings, LinkTransport } from "../../server/hosts/agent-link";

function kernel(id: string, state: AgentKernel["state"], gpuUtilization: number | null = null): AgentKernel {
  return { kernel: id, state, pid: 1, position: null, gpus: [], gpusRequested: 0, firstSeq: 1, lastSeq: 0, startedAt: null, gpuUtilization, exit: null };
}

function stateOf(id: string, state: AgentKernel["state"], requestId: string | null = null): Answer {
  return { type: "kernel_state", kernel: kernel(id, state), requestId };
}

/** Handlers that write down what reaches them. */
function recording(log: string[]): AgentKernelHandlers {
  return {
    frame: (json, seq) => log.push(`frame ${seq} ${json}`),
    console: (text, seq) => log.push(`console ${seq} ${text}`),
    badFrame: (reason, seq) => log.push(`bad ${seq} ${reason}`),
    exit: (exit, seq) => log.push(`exit ${seq} ${exit.reason}`),
    relinked: () => log.push("relinked"),
  };
}

describe("AgentRequests", () => {
  it("pairs each request with its answer, refuses at once without a link, and fails what waits when the link ends", async () => {
    const requests = new AgentRequests("gpu-1");
    const asked = requests.ask({ type: "health", requestId: "r1" }, () => true);
    assert.equal(requests.answer("r2", stateOf("k", "running", "r2")), false, "nobody waits for r2");
    assert.equal(requests.answer("r1", stateOf("k", "running", "r1")), true);
    assert.equal((await asked).type, "kernel_state");
    await assert.rejects(requests.ask({ type: "health", requestId: "r3" }, () => false), /host gpu-1: not connected/);
    const dropped = requests.ask({ type: "health", requestId: "r4" }, () => true);
    requests.failAll("the link closed");
    await assert.rejects(dropped, (error: unknown) => error instanceof HostAgentError && error.message === "host gpu-1: the link closed");
  });

  it("keeps a waiting start's states in order, and fails it when the agent loses the kernel", async () => {
    const requests = new AgentRequests("gpu-1");
    requests.openStart("k");
    requests.mail("k", stateOf("k", "queued"));
    requests.mail("other", stateOf("other", "running"));
    const first = await requests.nextState("k");
    assert.ok(first.type === "kernel_state" && first.kernel.state === "queued");
    const next = requests.nextState("k");
    requests.mail("k", stateOf("k", "running"));
    const second = await next;
    assert.ok(second.type === "kernel_state" && second.kernel.state === "running", "a state that comes later reaches the start waiting for it");
    requests.failStarts(new HostAgentError("gone"), "k");
    await assert.rejects(requests.nextState("k"), /gone/);
    requests.closeStart("k");
    await assert.rejects(requests.nextState("k"), /no start of k waits/);
  });
});

describe("KernelRoutes", () => {
  it("hands each sequence number on once, in order, to its kernel's owner", () => {
    const log: string[] = [];
    const routes = new KernelRoutes();
    routes.set("k", recording(log), 1);
    routes.deliver({ type: "kernel_console", kernel: "k", seq: 1, text: "already stored" });
    routes.deliver({ type: "kernel_frame", kernel: "k", seq: 2, json: "{}" });
    routes.deliver({ type: "kernel_frame", kernel: "k", seq: 2, json: "{}" });
    routes.deliver({ type: "kernel_bad_frame", kernel: "k", seq: 3, reason: "not JSON" });
    routes.deliver({ type: "kernel_console", kernel: "nobody", seq: 9, text: "x" });
    assert.deepEqual(log, ["frame 2 {}", "bad 3 not JSON"]);
    assert.equal(routes.size, 1);
  });

  it("resumes the kernels a new link's agent still runs, and ends those it no longer has", () => {
    const log: string[] = [];
    const routes = new KernelRoutes();
    routes.set("alive", recording(log), 4);
    routes.set("lost", recording(log), 7);
    const resumed: string[] = [];
    const gone: string[] = [];
    routes.relink([kernel("alive", "running")], (running, afterSeq) => resumed.push(`${running.kernel} after ${afterSeq}`), (kernelId) => gone.push(kernelId));
    assert.deepEqual(resumed, ["alive after 4"]);
    assert.deepEqual(gone, ["lost"]);
    assert.deepEqual(log, ["relinked", "exit 8 the host agent no longer runs this kernel (its lease expired or the host restarted)"]);
    assert.equal(routes.get("lost"), undefined);
  });
});

describe("LinkHeartbeat", () => {
  it("pings a silent link, says it stalled, then fails it once", async () => {
    const hello = { type: "agent_hello" } as const;
    const events: string[] = [];
    let pinged: () => void = () => undefined;
    const linked: LinkedState = { state: "connected", hello: { ...hello, protocol: 1, agentId: "a", codeHash: "c", pid: 1, hostname: "h", startedAt: 0, leaseSeconds: 60, kernels: [] }, since: 0 };
    const heartbeat = new LinkHeartbeat({
      linked: () => linked,
      ping: () => new Promise<void>((resolve) => ((pinged = resolve), events.push("ping"))),
      stalled: (silentSince) => events.push(`stalled since ${silentSince}`),
      failed: (reason) => events.push(`failed: ${reason}`),
    });
    heartbeat.heard(1_000);
    heartbeat.beat(1_000 + PING_AFTER_MS - 1);
    assert.deepEqual(events, [], "not silent long enough");
    heartbeat.beat(1_000 + PING_AFTER_MS);
    heartbeat.beat(1_000 + PING_AFTER_MS + 1);
    assert.deepEqual(events, ["ping"], "one ping at a time");
    pinged();
    heartbeat.beat(1_000 + STALL_AFTER_MS);
    await Promise.resolve();
    assert.deepEqual(events.slice(1, 2), ["stalled since 1000"]);
    heartbeat.beat(1_000 + FAIL_AFTER_MS);
    heartbeat.beat(1_000 + FAIL_AFTER_MS + 1);
    assert.equal(events.filter((event: string) => event.startsWith("failed")).length, 1, "failed once");
    assert.match(heartbeat.takeFailure() ?? "", /stopped answering \(nothing for 30 s\)/);
    assert.equal(heartbeat.takeFailure(), null);
    heartbeat.stop();
  });
});

describe("ReconnectBackoff", () => {
  it("pauses longer after each try, up to the longest, and starts over once a link opens", () => {
    const backoff = new ReconnectBackoff();
    const delays: number[] = [];
    for (let i = 0; i < RECONNECT_DELAYS_MS.length + 1; i++) {
      delays.push(backoff.nextDelayMs);
      backoff.schedule(() => undefined);
      backoff.cancel();
    }
    assert.deepEqual(delays, [...RECONNECT_DELAYS_MS, 10_000]);
    backoff.reset();
    assert.equal(backoff.nextDelayMs, 250);
  });
});

describe("codeVerdict", () => {
  const ours = { codeHash: "aaaaaaaa1111" };
  it("uses an agent running this lab's code, replaces an idle one running other code, keeps a busy one", () => {
    assert.deepEqual(codeVerdict("gpu-1", { codeHash: "aaaaaaaa1111", kernels: [] }, ours, 0), { kind: "current" });
    const idle = codeVerdict("gpu-1", { codeHash: "bbbbbbbb2222", kernels: [kernel("old", "exited")] }, ours, 0);
    assert.deepEqual(idle, { kind: "replace", message: "host gpu-1: replacing its agent, which runs other code (bbbbbbbb) and no kernel, with this lab's (aaaaaaaa)" });
    const busy = codeVerdict("gpu-1", { codeHash: "bbbbbbbb2222", kernels: [kernel("k", "running")] }, ours, 0);
    assert.equal(busy.kind, "keep");
    assert.match(busy.kind === "keep" ? busy.message : "", /and 1 kernel\(s\); it is replaced once they end/);
    assert.equal(codeVerdict("gpu-1", { codeHash: "bbbbbbbb2222", kernels: [] }, ours, 3).kind, "keep", "a few tries at most");
  });
});

describe("AgentSettingsState", () => {
  it("keeps the agent's last word on its settings and logs each note", () => {
    const lines: string[] = [];
    const settings: AgentBootSettings = { agentId: "a", leaseSeconds: 60, bufferBytes: 1 << 20, gpus: null, whenFull: "queue", interruptGraceMs: 2000, python: null, runtimeDir: "/tmp" };
    const transport: LinkTransport = { launchArgv: (bootstrap) => ["python3", "-c", bootstrap], describe: () => "this machine" };
    const state = new AgentSettingsState({ settings, transport }, "gpu-1", (level, message) => lines.push(`${level} ${message}`));
    assert.equal(state.transport.describe(), "this machine");
    state.heard([{ setting: "leaseSeconds", applied: true, message: "lease 60 s" }, { setting: "gpus", applied: false, message: "GPU 3 kept: a kernel holds it" }], "this link");
    state.heard([], "the reloaded hosts file");
    assert.equal(state.lastNotes.length, 2, "no notes leave the last word as it was");
    assert.deepEqual(lines, ["info host gpu-1: the agent took from this link: lease 60 s", "warning host gpu-1: the agent kept from this link: GPU 3 kept: a kernel holds it"]);
  });
});

describe("AgentGpuUse", () => {
  it("follows each kernel's utilisation from its states, and forgets an ended kernel", () => {
    const use = new AgentGpuUse();
    use.kernelState(kernel("k", "running", 42));
    assert.equal(use.of("k"), 42);
    use.kernelState(kernel("k", "exited", 42));
    assert.equal(use.of("k"), null);
    assert.equal(use.lastHealth, null);
  });
});
