/**
 * The pure pieces of the hosts page and the kernel spec: a HostView built
 * from an agent's state and last health, what a host card and the notebook
 * header say, the reducer's kernel-spec-changed, the spec checks, the
 * .ipynb spec reading, and the hosts page model against a lab that answers
 * list-hosts/check-host as the protocol says (the server is faked, the model is real).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessageOf } from "../../server/core/protocol/agent-messages";
import { describeLeasedGpus, shortGpuId, UNKNOWN_HOLDER, type HostView } from "../../server/core/protocol/hosts-model";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { labCommandSchema, notebookCommandSchema, type LabCommand } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";
import { applyServerEvent } from "../../server/core/notebook/notebook-state";
import { buildHostView, type HostFacts } from "../../server/hosts/host-view";
import type { HostLinkState } from "../../server/hosts/host-agent";
import { checkKernelSpec, type KernelHosts } from "../../server/notebook/kernel-hosts";
import { CommandError } from "../../server/errors";
import { readKernelSpec, settleKernelSpec } from "../../server/ipynb/kernel-spec";
import { hostCard, HostsController } from "../../components/hosts/model/hosts";
import { kernelPlacementText, kernelSpecLabel, linkTroubleText, maxGpusOn, queueText, refusalText, specAppliesLater } from "../../components/hosts/model/kernel-spec";
import type { LabTransport } from "../../components/shell/model/lab-client";

const NOW = Date.parse("2025-06-01T12:00:00Z");
const UUID_A = "GPU-1a2b3c4d-0000-1111-2222-333344445555";
const UUID_B = "GPU-3c4d5e6f-0000-1111-2222-333344445555";

function health(patch: Partial<AgentMessageOf<"health">> = {}): AgentMessageOf<"health"> {
  return {
    type: "health",
    requestId: "r1",
    hostname: "gpu1",
    pid: 4242,
    uptimeSeconds: 120,
    python: "3.12.3",
    torch: "2.11.0",
    cuda: "12.8",
    probe: "done",
    gpuSource: "nvml",
    gpus: [
      { gpu: { index: 0, uuid: UUID_A, name: "H100", memoryTotalMiB: 81_559 }, memoryUsedMiB: 2_048, utilization: 37, kernel: "k-mine" },
      { gpu: { index: 1, uuid: UUID_B, name: "H100", memoryTotalMiB: 81_559 }, memoryUsedMiB: 0, utilization: 0, kernel: "k-theirs" },
    ],
    kernels: 2,
    queued: 1,
    leaseSeconds: 600,
    links: 1,
    codeHash: "lab-code",
    ...patch,
  };
}

function hello(pid = 4242): Extract<HostLinkState, { state: "connected" }>["hello"] {
  return { type: "agent_hello", protocol: 1, agentId: "gpu1-lab", codeHash: "lab-code", pid, hostname: "gpu1", startedAt: NOW - 60_000, leaseSeconds: 600, kernels: [] };
}

function facts(patch: Partial<HostFacts> = {}): HostFacts {
  return {
    spec: { id: "gpu1", label: "GPU box", kind: "ssh", target: "lab@gpu1 over ssh" },
    state: { state: "connected", hello: hello(), since: NOW - 60_000 },
    health: { message: health(), at: NOW - 5_000 },
    checkError: null,
    labCodeHash: "lab-code",
    holderOf: (kernel) => (kernel === "k-mine" ? { owner: "Ana", notebookId: "nb1", title: "DDP hangs" } : kernel === "k-bob" ? { owner: "Bob", notebookId: null, title: null } : null),
    ...patch,
  };
}

describe("buildHostView", () => {
  it("reads a connected host's health: software, GPUs with their holders, kernels, and an agent running the lab's code", () => {
    const view = buildHostView(facts());
    assert.equal(view.link, "connected");
    assert.equal(view.error, null);
    assert.deepEqual([view.python, view.torch, view.cuda, view.probe, view.gpuSource], ["3.12.3", "2.11.0", "12.8", "done", "nvml"]);
    assert.deepEqual(view.agent, { pid: 4242, uptimeSeconds: 120, codeHash: "lab-code", sameCodeAsLab: true, leaseSeconds: 600, links: 1 });
    assert.deepEqual(view.gpus.map((gpu) => gpu.heldBy), [
      { owner: "Ana", notebookId: "nb1", title: "DDP hangs", gpus: 1, since: null },
      { ...UNKNOWN_HOLDER, gpus: 1, since: null },
    ]);
    assert.deepEqual(view.gpus[0]!.memoryUsedMiB, 2_048);
    assert.deepEqual(view.kernels, { running: 2, queued: 1 });
    assert.equal(view.checkedAt, NOW - 5_000);
  });

  it("says an agent started from other code is not the lab's", () => {
    assert.equal(buildHostView(facts({ labCodeHash: "newer-code" })).agent?.sameCodeAsLab, false);
    assert.equal(buildHostView(facts({ labCodeHash: null })).agent?.sameCodeAsLab, false);
  });

  it("keeps the last health of an unreachable host, with the error and what the link printed", () => {
    const view = buildHostView(facts({ state: { state: "unreachable", error: "ssh exited with code 255", output: "lab@gpu1: Permission denied (publickey).\n", at: NOW } }));
    assert.equal(view.link, "unreachable");
    assert.equal(view.error, "ssh exited with code 255");
    assert.match(view.errorOutput ?? "", /Permission denied/);
    assert.equal(view.checkedAt, NOW);
    assert.equal(view.torch, "2.11.0", "what the host had is still shown");
  });

  it("an unreachable host that printed nothing has no output to show", () => {
    assert.equal(buildHostView(facts({ health: null, state: { state: "unreachable", error: "no answer", output: "  \n", at: NOW } })).errorOutput, null);
  });

  it("a failed check newer than the last answer is the error; an older one is not", () => {
    assert.equal(buildHostView(facts({ checkError: { message: "no answer to health within 60 s", at: NOW } })).error, "no answer to health within 60 s");
    assert.equal(buildHostView(facts({ checkError: { message: "old", at: NOW - 10_000 } })).error, null);
  });

  it("a host never checked knows nothing yet; a connected one without health shows its hello", () => {
    const never = buildHostView(facts({ state: { state: "disconnected" }, health: null }));
    assert.deepEqual([never.checkedAt, never.agent, never.python, never.gpuSource, never.kernels], [null, null, null, null, null]);
    assert.deepEqual(never.gpus, []);
    const greeted = buildHostView(facts({ health: null }));
    assert.equal(greeted.agent?.pid, 4242);
    assert.equal(greeted.agent?.links, null);
  });

  it("a newer agent's hello wins over the last health of the one it replaced", () => {
    const view = buildHostView(facts({ state: { state: "connected", hello: { ...hello(5151), codeHash: "other" }, since: NOW } }));
    assert.equal(view.agent?.pid, 5151);
    assert.equal(view.agent?.sameCodeAsLab, false);
  });
});

describe("host cards", () => {
  const view = buildHostView(facts());

  it("say where the host is, what its agent runs, and each GPU with its holder linked", () => {
    const card = hostCard(view, NOW);
    assert.equal(card.kindAndTarget, "SSH · lab@gpu1 over ssh");
    assert.equal(card.linkLabel, "connected");
    assert.equal(card.checked, "checked 5 s ago");
    assert.match(card.agent ?? "", /^agent pid 4242 · up 2 min · lease 10 min · 1 lab link · runs the lab's code$/);
    assert.equal(card.software, "Python 3.12.3 · torch 2.11.0 · CUDA 12.8");
    assert.equal(card.gpuSummary, "2 GPUs (NVML)");
    assert.equal(card.kernels, "2 running · 1 queued for GPUs");
    assert.deepEqual(card.gpus[0], {
      index: 0,
      name: "H100",
      shortUuid: "GPU-1a2b…",
      uuid: UUID_A,
      memory: "2.0 GiB / 79.6 GiB",
      utilization: "37 %",
      heldBy: { who: "Ana's 'DDP hangs'", href: "/notebooks/nb1", gpus: 1, since: null },
      reserved: null,
      retiring: false,
    });
    assert.deepEqual(card.gpus[1]!.heldBy, { who: "another lab or a previous run", href: null, gpus: 1, since: null });
  });

  it("list the queue with who, how many and since when, the holders since when, and a free GPU reserved for the first in line", () => {
    const since = new Date(2025, 5, 1, 10, 2).getTime();
    const queuedAt = new Date(2025, 5, 1, 10, 5).getTime();
    const queued = health({
      gpus: [
        { gpu: { index: 0, uuid: UUID_A, name: "H100", memoryTotalMiB: 81_559 }, memoryUsedMiB: 0, utilization: 0, kernel: "k-bob", since },
        { gpu: { index: 1, uuid: UUID_B, name: "H100", memoryTotalMiB: 81_559 }, memoryUsedMiB: 0, utilization: 0, kernel: null, reservedFor: "k-mine" },
      ],
      queue: [
        { kernel: "k-mine", gpus: 2, since: queuedAt },
        { kernel: "k-other", gpus: 1, since: queuedAt },
      ],
    });
    const card = hostCard(buildHostView(facts({ health: { message: queued, at: NOW } })), NOW);
    assert.deepEqual(card.gpus[0]!.heldBy, { who: "Bob's notebook", href: null, gpus: 1, since: "10:02" });
    assert.deepEqual(card.gpus[1]!.reserved, { text: "reserved for Ana's 'DDP hangs' (needs 2)", href: "/notebooks/nb1" });
    assert.deepEqual(card.queue, [
      { place: 1, who: "Ana's 'DDP hangs'", href: "/notebooks/nb1", gpus: 2, since: "10:05" },
      { place: 2, who: "another lab or a previous run", href: null, gpus: 1, since: "10:05" },
    ]);
  });

  it("say what the agent took from the hosts file, which GPU it keeps for its holder, and a stalled link's silence", () => {
    const retiring = health({ gpus: [{ gpu: { index: 0, uuid: UUID_A, name: "H100", memoryTotalMiB: 81_559 }, memoryUsedMiB: 0, utilization: 0, kernel: "k-mine", retiring: true }] });
    const view = buildHostView(
      facts({
        health: { message: retiring, at: NOW },
        notes: [
          { setting: "whenFull", applied: true, message: "when full: refuse (was queue)" },
          { setting: "gpus", applied: false, message: "GPU x is no longer in the hosts file; kernel k-mine holds it" },
        ],
        state: { state: "stalled", hello: hello(), since: NOW - 60_000, silentSince: NOW - 12_000 },
      }),
    );
    const card = hostCard(view, NOW);
    assert.deepEqual(card.settingsNotes, [
      { applied: true, text: "took from the hosts file: when full: refuse (was queue)" },
      { applied: false, text: `kept: GPU 0 (${UUID_A}) is no longer in the hosts file; Ana's 'DDP hangs' holds it, so it stays until that kernel ends` },
    ]);
    assert.equal(card.gpus[0]!.retiring, true);
    assert.equal(card.linkLabel, "stalled: no answer for 12 s");
  });

  it("show a host left out for its entry's problems", () => {
    const card = hostCard({ ...buildHostView(facts({ state: { state: "disconnected" }, health: null })), problem: ["hosts.json: hosts[0].leaseMinuts: unknown key (a typo?)"] }, NOW);
    assert.equal(card.linkLabel, "left out");
    assert.equal(card.kindAndTarget, "lab@gpu1 over ssh");
    assert.deepEqual(card.problem, ["hosts.json: hosts[0].leaseMinuts: unknown key (a typo?)"]);
  });

  it("never carry terminal control characters into an error", () => {
    const view = buildHostView(facts({ state: { state: "unreachable", error: "ssh exited with code 255: Permission denied\r\r", output: "\u001b[31mlab@gpu1: Permission denied (publickey).\r\r\n", at: NOW } }));
    assert.equal(view.error, "ssh exited with code 255: Permission denied");
    assert.equal(view.errorOutput, "lab@gpu1: Permission denied (publickey).");
  });

  it("say 'probing…' while the agent is still importing torch, and that another agent is replaced later", () => {
    const probing = hostCard(buildHostView(facts({ health: { message: health({ torch: null, cuda: null, probe: "pending" }), at: NOW } })), NOW);
    assert.equal(probing.software, "Python 3.12.3 · torch probing… · CUDA probing…");
    const other = hostCard(buildHostView(facts({ labCodeHash: "newer" })), NOW);
    assert.match(other.agent ?? "", /runs other code: replaced when its kernels end$/);
  });
});

describe("short GPU ids and leased GPUs", () => {
  it("shortens GPU and MIG UUIDs, keeps a short id whole", () => {
    assert.equal(shortGpuId(UUID_A), "GPU-1a2b…");
    assert.equal(shortGpuId("MIG-9f8e7d6c-aaaa"), "MIG-9f8e…");
    assert.equal(shortGpuId("GPU-1a2b"), "GPU-1a2b");
    assert.equal(shortGpuId("0"), "0");
  });

  it("names leased GPUs the hosts list knows, and gives every UUID in full for a title", () => {
    const known = buildHostView(facts()).gpus;
    const leased = describeLeasedGpus([UUID_A, "GPU-ffff0000-unknown"], known);
    assert.equal(leased.text, "H100 GPU-1a2b…, GPU-ffff…");
    assert.equal(leased.title, `GPU 0: H100 (${UUID_A})\nGPU-ffff0000-unknown`);
  });
});

describe("the notebook header's kernel words", () => {
  const hosts: HostView[] = [buildHostView(facts())];

  it("labels the spec with the host's label and the GPU count", () => {
    assert.equal(kernelSpecLabel({ hostId: "gpu1", gpus: 2 }, hosts), "Kernel: GPU box · 2 GPUs");
    assert.equal(kernelSpecLabel({ hostId: "local", gpus: 0 }, null), "Kernel: local · no GPU");
    assert.equal(kernelSpecLabel({ hostId: "gpu1", gpus: 1 }, hosts), "Kernel: GPU box · 1 GPU");
  });

  it("offers at most the host's GPUs when known", () => {
    assert.equal(maxGpusOn("gpu1", hosts), 2);
    assert.equal(maxGpusOn("elsewhere", hosts), 1024);
  });

  it("says a change waits for the next restart only while a kernel runs", () => {
    assert.deepEqual(
      (["not-started", "starting", "idle", "busy", "interrupting", "restarting", "dead", "shutdown"] as const).map(specAppliesLater),
      [false, true, true, true, true, true, false, false],
    );
  });

  it("names the kernel's host and leased GPUs, and its place in the GPU queue", () => {
    const info = { pid: 1, hostname: "gpu1", python: "3.12", executable: "python3", torch: "2.11", deviceMode: "1× CUDA GPU", host: { id: "gpu1", label: "GPU box" }, gpus: [UUID_B] };
    const placement = kernelPlacementText(info, hosts);
    assert.equal(placement.host, "on GPU box");
    assert.equal(placement.gpus?.text, "H100 GPU-3c4d…");
    assert.equal(kernelPlacementText({ ...info, gpus: [] }, hosts).gpus, null);
    assert.equal(queueText({ state: "starting", queue: { position: 3, host: "GPU box", gpus: 2 } }), "waiting for 2 GPUs on GPU box: #3 in the queue");
    assert.equal(queueText({ state: "starting" }), null);
    const clock = (ms: number) => `t${ms}`;
    const wait = {
      host: "GPU box",
      asked: 1,
      free: 1,
      total: 2,
      holders: [{ owner: "Bob", notebookId: null, title: null, gpus: 1, since: 5 }],
      ahead: [{ owner: "Ana", notebookId: "nb", title: "DDP sweep", gpus: 2, since: 7 }],
    };
    assert.equal(
      queueText({ state: "starting", queue: { position: 2, host: "GPU box", gpus: 1, wait } }, clock),
      "waiting for 1 GPU on GPU box: #2 in the queue, behind Ana's 'DDP sweep' (needs 2); held by Bob's notebook since t5; the 1 free GPU is reserved for the first in line",
    );
    const refused = { ...wait, asked: 2, ahead: [], holders: [{ owner: "Ana", notebookId: "nb", title: "DDP sweep", gpus: 1, since: 5 }] };
    assert.equal(refusalText({ state: "refused", reason: "r", wait: refused }, clock), "no GPU free on GPU box: 2 asked, 1 free; held by Ana's 'DDP sweep' since t5");
    assert.equal(refusalText({ state: "refused", reason: "r", wait: { ...refused, total: 1 } }, clock), "GPU box has 1 GPU: this kernel asks for 2; ask for fewer under Kernel");
    const kernelInfo = { pid: 1, hostname: "h", python: "3.12", executable: "python3", torch: null, deviceMode: "CPU" };
    assert.match(linkTroubleText({ state: "busy", info: kernelInfo, link: { state: "stalled", host: "GPU box", since: 9 } }, clock) ?? "", /^no answer from GPU box since t9/);
    assert.equal(linkTroubleText({ state: "busy", info: kernelInfo }, clock), null);
  });
});

describe("kernel-spec-changed in the one reducer", () => {
  const doc: NotebookDocument = { id: "nb", title: "nb", deleted: false, cells: [], kernel: { state: "not-started" }, predictions: {}, kernelSpec: { hostId: "local", gpus: 0 } };

  it("replaces the spec, and leaves the document as it is when nothing changes", () => {
    const changed = applyServerEvent(doc, { type: "kernel-spec-changed", spec: { hostId: "gpu1", gpus: 2 } });
    assert.deepEqual(changed.kernelSpec, { hostId: "gpu1", gpus: 2 });
    assert.equal(applyServerEvent(doc, { type: "kernel-spec-changed", spec: { hostId: "local", gpus: 0 } }), doc);
  });
});

describe("checking a kernel spec", () => {
  const hosts: KernelHosts = {
    defaultHost: "local",
    launcher: (hostId) => (hostId === "local" || hostId === "gpu1" ? { id: hostId, label: hostId, describe: () => hostId, start: () => Promise.reject(new Error("not here")) } : undefined),
    ids: () => ["local", "gpu1"],
    gpuCount: (hostId) => (hostId === "gpu1" ? 2 : null),
  };
  const refusal = (spec: { hostId: string; gpus: number }) => {
    try {
      checkKernelSpec(hosts, spec);
      return null;
    } catch (error) {
      assert.ok(error instanceof CommandError);
      return { code: error.code, message: error.message };
    }
  };

  it("takes a known host with no more GPUs than it has (any count while unknown)", () => {
    assert.equal(refusal({ hostId: "gpu1", gpus: 2 }), null);
    assert.equal(refusal({ hostId: "local", gpus: 8 }), null);
  });

  it("refuses an unknown host and too many GPUs, saying which", () => {
    assert.deepEqual(refusal({ hostId: "gpu9", gpus: 0 }), { code: "not-found", message: 'no host "gpu9" in this lab (its hosts: local, gpu1)' });
    assert.deepEqual(refusal({ hostId: "gpu1", gpus: 3 }), { code: "invalid", message: 'host "gpu1" has 2 GPUs: a kernel there cannot ask for 3' });
    assert.equal(refusal({ hostId: "local", gpus: 1025 })?.code, "invalid");
  });

  it("the socket API refuses malformed specs before anything acts on them", () => {
    assert.equal(notebookCommandSchema.safeParse({ op: "set-kernel-spec", notebookId: "nb", hostId: "gpu1", gpus: -1 }).success, false);
    assert.equal(notebookCommandSchema.safeParse({ op: "set-kernel-spec", notebookId: "nb", hostId: "gpu1", gpus: 1.5 }).success, false);
    assert.equal(notebookCommandSchema.safeParse({ op: "set-kernel-spec", notebookId: "nb", hostId: "../etc", gpus: 0 }).success, false);
    assert.equal(notebookCommandSchema.safeParse({ op: "set-kernel-spec", notebookId: "nb", hostId: "gpu1", gpus: 1024 }).success, true);
  });
});

describe("a kernel spec in a .ipynb file", () => {
  it("is read when well formed, and a malformed one is noted and left at the default", () => {
    const notes: string[] = [];
    assert.deepEqual(readKernelSpec({ hostId: "gpu1", gpus: 2 }, "here", notes), { hostId: "gpu1", gpus: 2 });
    assert.deepEqual(readKernelSpec(undefined, "here", notes), { hostId: null, gpus: 0 });
    assert.deepEqual(notes, []);
    assert.deepEqual(readKernelSpec({ hostId: "gpu1", gpus: "all" }, "here", notes), { hostId: null, gpus: 0 });
    assert.match(notes[0] ?? "", /^here: not a kernel spec/);
  });

  it("keeps a host the lab has, and moves one it lacks to the default host with a note", () => {
    const notes: string[] = [];
    assert.deepEqual(settleKernelSpec({ hostId: "gpu1", gpus: 1 }, ["local", "gpu1"], notes), { hostId: "gpu1", gpus: 1 });
    assert.deepEqual(settleKernelSpec({ hostId: "gpu9", gpus: 1 }, ["local", "gpu1"], notes), { hostId: null, gpus: 1 });
    assert.deepEqual(notes, ['metadata.mgpulab.kernelSpec: host "gpu9" is not one of this lab\'s hosts (local, gpu1); the notebook\'s kernels start on the default host']);
  });
});

/** Answers list-hosts and check-host as the server does, from a list it holds. */
class FakeHostsLab implements LabTransport {
  readonly sent: LabCommand[] = [];
  hosts: HostView[] = [buildHostView(facts({ state: { state: "disconnected" }, health: null }))];

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    this.sent.push(labCommandSchema.parse(command));
    if (command.op === "list-hosts") return Promise.resolve({ ok: true, hosts: this.hosts });
    if (command.op === "check-host") {
      if (command.hostId !== "gpu1") return Promise.resolve({ ok: false, error: `no host "${command.hostId}"`, code: "not-found" });
      return Promise.resolve({ ok: true, host: buildHostView(facts()) });
    }
    return Promise.resolve({ ok: false, error: "not a hosts command", code: "invalid" });
  }

  onConnect(): void {}

  close(): void {}
}

describe("the hosts page model", () => {
  it("lists the hosts, replaces a card with its check's answer, and says when a check is refused", async () => {
    const lab = new FakeHostsLab();
    const controller = new HostsController(lab);
    await controller.refresh();
    assert.equal(controller.getState().hosts?.[0]?.python, null);
    assert.equal(await controller.check("gpu1"), true);
    const state = controller.getState();
    assert.equal(state.hosts?.length, 1);
    assert.equal(state.hosts?.[0]?.python, "3.12.3");
    assert.deepEqual(state.checking, []);
    assert.equal(await controller.check("gpu9"), false);
    assert.equal(controller.getState().error, 'Checking gpu9 failed: no host "gpu9"');
    assert.deepEqual(lab.sent.map((command) => command.op), ["list-hosts", "check-host", "check-host"]);
  });
});
