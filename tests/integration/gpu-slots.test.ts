/**
 * GPU slots through the lab: hosts that declare two GPUs each (no real GPU
 * is needed: the agent leases by UUID through CUDA_VISIBLE_DEVICES), and
 * three kernels asking for one each. The first two get one each and their
 * notebooks name it; the third waits in the host's queue with its place
 * shown, and starts on the GPU the first frees; on a host that refuses, the
 * third is refused (it waits, naming who holds the GPUs), and a crashed
 * kernel frees its slot.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { LabHosts, localHostSpec } from "../../server/hosts/lab-hosts";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import type { KernelStatus } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 90_000 };
const QUEUED_GPUS = [
  { index: 0, uuid: "GPU-11111111-1111-1111-1111-111111111111", name: "Declared A0", memoryTotalMiB: 81_559 },
  { index: 1, uuid: "GPU-11111111-1111-1111-1111-222222222222", name: "Declared A1", memoryTotalMiB: 81_559 },
];
const REFUSED_GPUS = [
  { index: 0, uuid: "GPU-22222222-2222-2222-2222-111111111111", name: "Declared B0", memoryTotalMiB: 81_559 },
  { index: 1, uuid: "GPU-22222222-2222-2222-2222-222222222222", name: "Declared B1", memoryTotalMiB: 81_559 },
];
const SHOW_GPUS = "import os\nprint('visible', os.environ.get('CUDA_VISIBLE_DEVICES'))";

function labHosts(labId: string): LabHosts {
  const python = chooseInterpreter().executable;
  const queueing = { ...localHostSpec(python, { gpus: QUEUED_GPUS, whenFull: "queue", leaseSeconds: 30 }), label: "queueing box" };
  const refusing = { ...localHostSpec(python, { gpus: REFUSED_GPUS, whenFull: "refuse", leaseSeconds: 30 }), id: "strict", label: "refusing box" };
  return new LabHosts([queueing, refusing], "local", labId, () => undefined);
}

function statuses(client: TestClient): KernelStatus[] {
  return client.events.filter((event): event is Extract<NotebookEvent, { type: "kernel-status" }> => event.type === "kernel-status").map((event) => event.status);
}

function streamOf(client: TestClient, cellId: string): string {
  return client.events
    .filter((event): event is Extract<NotebookEvent, { type: "cell-stream" }> => event.type === "cell-stream" && event.cellId === cellId)
    .map((event) => event.text)
    .join("");
}

describe("GPU slots through the lab", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-slots-"));
  let harness: SocketHarness;

  before(async () => {
    harness = await SocketHarness.start({ dataDir, hosts: labHosts });
  });
  after(async () => {
    await harness?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A notebook asking `gpus` of `hostId`, open in its own client. */
  async function notebookOn(hostId: string, gpus: number, title: string): Promise<{ client: TestClient; notebookId: string; cellId: string }> {
    const client = await harness.client();
    const created = await client.sendLab({ op: "create-notebook", title });
    assert.ok(created.ok && created.notebook);
    const notebookId = created.notebook.id;
    const opened = await client.send({ op: "open", notebookId });
    assert.ok(opened.ok && opened.notebook);
    assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId, hostId, gpus }), { ok: true });
    return { client, notebookId, cellId: opened.notebook.cells[0]!.id };
  }

  it("leases free GPUs by UUID, queues the third kernel with its place, and starts it on the GPU the first frees", LIMIT, async () => {
    const first = await notebookOn("local", 1, "first");
    const second = await notebookOn("local", 1, "second");
    const third = await notebookOn("local", 1, "third waits");
    try {
      for (const holder of [first, second]) {
        assert.deepEqual(await holder.client.run(holder.notebookId, { [holder.cellId]: SHOW_GPUS }), { ok: true });
        await holder.client.waitFor((event) => event.type === "cell-finished" && event.cellId === holder.cellId);
      }
      const firstGpu = streamOf(first.client, first.cellId).trim().split(" ")[1];
      const secondGpu = streamOf(second.client, second.cellId).trim().split(" ")[1];
      assert.deepEqual([firstGpu, secondGpu].sort(), QUEUED_GPUS.map((gpu) => gpu.uuid).sort(), "two kernels, two different GPUs");
      const running = statuses(first.client).find((status) => status.state === "idle");
      assert.ok(running && running.state === "idle");
      assert.deepEqual(running.info.gpus, [firstGpu], "the notebook names the GPU it got");

      assert.deepEqual(await third.client.run(third.notebookId, { [third.cellId]: SHOW_GPUS }), { ok: true });
      const waiting = await third.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "starting" && event.status.queue !== undefined);
      assert.ok(waiting.type === "kernel-status" && waiting.status.state === "starting");
      const { wait, ...place } = waiting.status.queue ?? {};
      assert.deepEqual(place, { position: 1, host: "queueing box", gpus: 1 });
      assert.deepEqual(wait?.holders.map((holder) => [holder.owner, holder.title]), [["Local user", "first"], ["Local user", "second"]], "it says whose kernels hold the GPUs");

      assert.deepEqual(await first.client.send({ op: "shutdown", notebookId: first.notebookId }), { ok: true });
      await third.client.waitFor((event) => event.type === "cell-finished" && event.cellId === third.cellId);
      assert.equal(streamOf(third.client, third.cellId), `visible ${firstGpu}\n`, "the freed GPU went to the waiting kernel");
    } finally {
      for (const each of [second, third]) await each.client.send({ op: "shutdown", notebookId: each.notebookId });
      for (const each of [first, second, third]) each.client.close();
    }
  });

  it("on a host that refuses when full, the third kernel is refused with why; a crashed kernel frees its GPU", LIMIT, async () => {
    const one = await notebookOn("strict", 1, "holds a strict GPU");
    const two = await notebookOn("strict", 1, "holds the other");
    const refused = await notebookOn("strict", 1, "is refused");
    try {
      for (const holder of [one, two]) {
        await holder.client.run(holder.notebookId, { [holder.cellId]: SHOW_GPUS });
        await holder.client.waitFor((event) => event.type === "cell-finished" && event.cellId === holder.cellId);
      }
      const oneGpu = streamOf(one.client, one.cellId).trim().split(" ")[1];

      await refused.client.run(refused.notebookId, { [refused.cellId]: SHOW_GPUS });
      // Refused, not dead: nothing was started, and the refusal says why.
      const waiting = await refused.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "refused");
      assert.ok(waiting.type === "kernel-status" && waiting.status.state === "refused");
      assert.match(waiting.status.reason, /no GPU free on refusing box: 1 asked, 0 free; held by Local user's 'holds a strict GPU', Local user's 'holds the other'/);
      // The Run it took is stored, and ended with the refusal (viewers see the cell end only once that is stored).
      const ended = await refused.client.waitFor((event) => event.type === "cell-finished" && event.cellId === refused.cellId);
      assert.ok(ended.type === "cell-finished" && ended.status === "no-kernel");
      const runs = await harness.lab.repositories.runs.list(refused.notebookId);
      assert.deepEqual(runs.map((run) => [run.status, run.exitReason]), [["interrupted", waiting.status.reason]], "the run stored for the Run ends, saying why");
      assert.deepEqual((await harness.lab.repositories.runs.listExecutions(runs[0]!.id)).map((execution) => execution.status), ["no-kernel"]);

      // One holder's kernel crashes: its GPU is free again, however it ended.
      await one.client.run(one.notebookId, { [one.cellId]: "import os\nos._exit(3)" });
      await one.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "dead");
      assert.deepEqual(await refused.client.send({ op: "restart", notebookId: refused.notebookId }), { ok: true });
      await refused.client.run(refused.notebookId, { [refused.cellId]: SHOW_GPUS });
      await refused.client.waitFor((event) => event.type === "cell-finished" && event.cellId === refused.cellId && streamOf(refused.client, refused.cellId) !== "");
      assert.equal(streamOf(refused.client, refused.cellId), `visible ${oneGpu}\n`);
    } finally {
      for (const each of [two, refused]) await each.client.send({ op: "shutdown", notebookId: each.notebookId });
      for (const each of [one, two, refused]) each.client.close();
    }
  });
});
