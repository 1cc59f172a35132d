/**
 * The Running kernels model against a lab that answers the kernel commands
 * as the protocol says (the server is faked, the model is real), and what
 * each row says.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LabTransport } from "../../components/shell/model/lab-client";
import { kernelRow, RunningKernelsController, shutdownAllQuestion, summaryLine, type KernelRow } from "../../components/admin/model/running-kernels";
import type { KernelListing, ListedKernel } from "../../server/core/protocol/kernels-model";
import { labCommandSchema, type LabCommand } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";

const NOW = Date.parse("2025-06-01T12:00:00Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MIN = 60_000;

const refOf = (notebookId: string) => `ref-${notebookId}-`.padEnd(20, "0");

function kernel(notebookId: string, patch: Partial<ListedKernel> = {}): ListedKernel {
  return {
    notebookId,
    kernelRef: refOf(notebookId),
    title: `notebook ${notebookId}`,
    state: "idle",
    pid: 1000,
    startedAt: ago(30 * MIN),
    lastActivityAt: ago(5 * MIN),
    viewers: 0,
    executions: 0,
    memory: { rssBytes: 238_000_000, processes: 1 },
    idleShutdownAt: new Date(NOW + 55 * MIN).toISOString(),
    ...patch,
  };
}

/** Answers like the server; each answer waits until released when `hold` is set. */
class KernelLab implements LabTransport {
  kernels: ListedKernel[] = [];
  readonly sent: LabCommand[] = [];
  refuse: string | null = null;
  hold = false;
  private readonly held: Array<() => void> = [];

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    labCommandSchema.parse(command);
    this.sent.push(command);
    const answer = this.answer(command);
    if (!this.hold) return Promise.resolve(answer);
    return new Promise((resolve) => this.held.push(() => resolve(answer)));
  }

  /** Releases held answers, last sent first (a slow refresh answered after a shutdown's answer). */
  releaseNewestFirst(): void {
    for (const release of this.held.splice(0).reverse()) release();
  }

  onConnect(): void {}
  close(): void {}

  private listing(): KernelListing {
    return { kernels: [...this.kernels], maxKernels: 16, idleShutdownMs: 60 * MIN, memoryMethod: "VmRSS summed" };
  }

  private answer(command: LabCommand): LabAnswer<LabOp> {
    if (this.refuse !== null) return { ok: false, error: this.refuse, code: "internal" };
    switch (command.op) {
      case "list-kernels":
        return { ok: true, kernels: this.listing() };
      case "shutdown-kernel":
        this.kernels = this.kernels.filter((k) => k.notebookId !== command.notebookId);
        return { ok: true, kernels: this.listing() };
      case "shutdown-listed-kernel":
        this.kernels = this.kernels.filter((k) => k.kernelRef !== command.kernelRef);
        return { ok: true, kernels: this.listing() };
      case "shutdown-all-kernels":
        this.kernels = [];
        return { ok: true, kernels: this.listing() };
      default:
        return { ok: false, error: `not a kernel command: ${command.op}`, code: "invalid" };
    }
  }
}

function controller(lab: KernelLab, confirm: (question: string) => boolean = () => true) {
  return new RunningKernelsController(lab, { confirm, pollMs: 60 * MIN });
}

describe("Running kernels model", () => {
  it("shuts down a kernel whose notebook the admin may not name by its ref, and shows it by owner only", async () => {
    const lab = new KernelLab();
    lab.kernels = [kernel("a"), kernel("secret", { notebookId: null, title: "a notebook of Ana" })];
    const view = controller(lab);
    await view.refresh();
    const hidden = view.getState().listing!.kernels[1]!;
    const row = kernelRow(hidden, NOW);
    assert.equal(row.href, null, "no link to a notebook the viewer may not read");
    assert.equal(row.title, "a notebook of Ana");
    assert.equal(await view.shutdown(hidden), true);
    assert.deepEqual(lab.sent.at(-1), { op: "shutdown-listed-kernel", kernelRef: refOf("secret") });
    assert.deepEqual(view.getState().listing?.kernels.map((k) => k.notebookId), ["a"]);
  });

  it("loads the kernels and shuts one down, keeping its button disabled while it ends", async () => {
    const lab = new KernelLab();
    lab.kernels = [kernel("a"), kernel("b")];
    const view = controller(lab);
    await view.refresh();
    assert.equal(view.getState().status, "ready");
    assert.deepEqual(view.getState().listing?.kernels.map((k) => k.notebookId), ["a", "b"]);

    lab.hold = true;
    const done = view.shutdown(kernel("a"));
    assert.deepEqual(view.getState().stopping, [refOf("a")]);
    lab.releaseNewestFirst();
    assert.equal(await done, true);
    assert.deepEqual(view.getState().stopping, []);
    assert.deepEqual(view.getState().listing?.kernels.map((k) => k.notebookId), ["b"]);
    assert.deepEqual(lab.sent.at(-1), { op: "shutdown-kernel", notebookId: "a" });
  });

  it("does not let a slower, older refresh bring back a kernel that was shut down", async () => {
    const lab = new KernelLab();
    lab.kernels = [kernel("a")];
    const view = controller(lab);
    lab.hold = true;
    const refresh = view.refresh(); // answered with "a" still running
    const shutdown = view.shutdown(kernel("a"));
    lab.releaseNewestFirst();
    await Promise.all([refresh, shutdown]);
    assert.deepEqual(view.getState().listing?.kernels, []);
  });

  it("asks before shutting all down, saying what would be lost; a no sends nothing", async () => {
    const lab = new KernelLab();
    lab.kernels = [kernel("a", { state: "busy", executions: 1 }), kernel("b", { viewers: 2 }), kernel("c")];
    const questions: string[] = [];
    let answer = false;
    const view = controller(lab, (question) => {
      questions.push(question);
      return answer;
    });
    await view.refresh();
    assert.equal(await view.shutdownAll(), false);
    assert.deepEqual(questions, ["Shut down all 3 kernels (1 running a cell, 1 open in a tab)? Their variables are lost; the notebooks stay as they are."]);
    assert.equal(lab.sent.some((c) => c.op === "shutdown-all-kernels"), false);

    answer = true;
    assert.equal(await view.shutdownAll(), true);
    assert.deepEqual(view.getState().listing?.kernels, []);
    assert.deepEqual(view.getState().stopping, []);
  });

  it("shows the server's refusal and keeps the last listing", async () => {
    const lab = new KernelLab();
    lab.kernels = [kernel("a")];
    const view = controller(lab);
    await view.refresh();
    lab.refuse = "no answer from the server (timed out or disconnected)";
    assert.equal(await view.shutdown(kernel("a")), false);
    assert.equal(view.getState().error, "Shutting the kernel down failed: no answer from the server (timed out or disconnected)");
    assert.deepEqual(view.getState().listing?.kernels.map((k) => k.notebookId), ["a"]);
    view.dismissError();
    assert.equal(view.getState().error, null);
  });

  it("is in error, not empty, when the first load fails", async () => {
    const lab = new KernelLab();
    lab.refuse = "invalid command";
    const view = controller(lab);
    await view.refresh();
    assert.equal(view.getState().status, "error");
    assert.equal(view.getState().listing, null);
  });
});

describe("kernelRow", () => {
  const cases: Array<[string, Partial<ListedKernel>, Partial<KernelRow>]> = [
    [
      "an idle kernel nobody views, due for idle shutdown",
      {},
      { stateLabel: "idle", started: "30 min ago", lastActivity: "5 min ago", viewers: "nobody", memory: "238 MB", idleShutdown: "in 55 min 0 s if unused" },
    ],
    ["a busy kernel with cells queued", { state: "busy", executions: 3, idleShutdownAt: null }, { stateLabel: "busy (2 queued)", idleShutdown: "in use" }],
    ["a viewed kernel", { viewers: 2, idleShutdownAt: null }, { viewers: "2 tabs", idleShutdown: "in use" }],
    ["one tab", { viewers: 1, idleShutdownAt: null }, { viewers: "1 tab" }],
    ["a starting kernel", { state: "starting", pid: null, memory: null, idleShutdownAt: null }, { stateLabel: "starting…", memory: "not measured", idleShutdown: "—" }],
    ["ranks in the tree", { memory: { rssBytes: 1_234_000_000, processes: 5 } }, { memory: "1.2 GB in 5 processes" }],
    ["past due", { idleShutdownAt: ago(1_000) }, { idleShutdown: "due now" }],
  ];
  for (const [name, patch, expected] of cases) {
    it(name, () => {
      const row = kernelRow(kernel("x", patch), NOW);
      assert.deepEqual({ ...row, ...expected }, row, "each expected field is what the row says");
      assert.equal(row.href, "/notebooks/x");
    });
  }
});

describe("summaryLine and shutdownAllQuestion", () => {
  it("sums memory and states the limits", () => {
    const listing: KernelListing = { kernels: [kernel("a"), kernel("b", { memory: null })], maxKernels: 16, idleShutdownMs: 60 * MIN, memoryMethod: "" };
    assert.equal(summaryLine(listing), "2 of at most 16 kernels · 238 MB · unused kernels shut down after 60 min");
    assert.equal(summaryLine({ ...listing, kernels: [], idleShutdownMs: null }), "0 of at most 16 kernels · 0 bytes · idle shutdown is off");
  });

  it("asks plainly for one unused kernel", () => {
    assert.equal(shutdownAllQuestion([kernel("a")]), "Shut down all 1 kernel? Their variables are lost; the notebooks stay as they are.");
  });
});
