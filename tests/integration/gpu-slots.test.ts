/**
 * GPU slots through the lab: hosts that declare one GPU each (no real GPU is
 * needed: the agent leases by UUID through CUDA_VISIBLE_DEVICES). A kernel
 * asking for it gets it and the notebook names it; a second one waits in the
 * host's queue with its place shown, and starts when the first ends; on a
 * host that refuses, the second is refused with a message; a crashed kernel
 * frees its slot.
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
const QUEUED_GPU = { index: 0, uuid: "GPU-11111111-1111-1111-1111-111111111111", name: "Declared A", memoryTotalMiB: 81_559 };
const REFUSED_GPU = { index: 0, uuid: "GPU-22222222-2222-2222-2222-222222222222", name: "Declared B", memoryTotalMiB: 81_559 };
const SHOW_GPUS = "import os\nprint('visible', os.environ.get('CUDA_VISIBLE_DEVICES'))";

function labHosts(labId: string): LabHosts {
  const python = chooseInterpreter().executable;
  const queueing = { ...localHostSpec(python, { gpus: [QUEUED_GPU], whenFull: "queue", leaseSeconds: 30 }), label: "queueing box" };
  const refusing = { ...localHostSpec(python, { gpus: [REFUSED_GPU], whenFull: "refuse", leaseSeconds: 30 }), id: "strict", label: "refusing box" };
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

  it("leases a free GPU by UUID, queues the next kernel with its place, and starts it when the first ends", LIMIT, async () => {
    const first = await notebookOn("local", 1, "holds the GPU");
    const second = await notebookOn("local", 1, "waits for it");
    try {
      assert.deepEqual(await first.client.run(first.notebookId, { [first.cellId]: SHOW_GPUS }), { ok: true });
      await first.client.waitFor((event) => event.type === "cell-finished" && event.cellId === first.cellId);
      assert.equal(streamOf(first.client, first.cellId), `visible ${QUEUED_GPU.uuid}\n`);
      const running = statuses(first.client).find((status) => status.state === "idle");
      assert.ok(running && running.state === "idle");
      assert.deepEqual(running.info.gpus, [QUEUED_GPU.uuid], "the notebook names the GPU it got");

      assert.deepEqual(await second.client.run(second.notebookId, { [second.cellId]: SHOW_GPUS }), { ok: true });
      const waiting = await second.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "starting" && event.status.queue !== undefined);
      assert.ok(waiting.type === "kernel-status" && waiting.status.state === "starting");
      assert.deepEqual(waiting.status.queue, { position: 1, host: "queueing box", gpus: 1 });

      assert.deepEqual(await first.client.send({ op: "shutdown", notebookId: first.notebookId }), { ok: true });
      await second.client.waitFor((event) => event.type === "cell-finished" && event.cellId === second.cellId);
      assert.equal(streamOf(second.client, second.cellId), `visible ${QUEUED_GPU.uuid}\n`, "the freed GPU went to the waiting kernel");
    } finally {
      await second.client.send({ op: "shutdown", notebookId: second.notebookId });
      first.client.close();
      second.client.close();
    }
  });

  it("on a host that refuses when full, the second kernel is refused with why; a crashed kernel frees its GPU", LIMIT, async () => {
    const holder = await notebookOn("strict", 1, "holds the strict GPU");
    const refused = await notebookOn("strict", 1, "is refused");
    try {
      await holder.client.run(holder.notebookId, { [holder.cellId]: SHOW_GPUS });
      await holder.client.waitFor((event) => event.type === "cell-finished" && event.cellId === holder.cellId);
      assert.equal(streamOf(holder.client, holder.cellId), `visible ${REFUSED_GPU.uuid}\n`);

      await refused.client.run(refused.notebookId, { [refused.cellId]: SHOW_GPUS });
      const dead = await refused.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "dead");
      assert.ok(dead.type === "kernel-status" && dead.status.state === "dead");
      assert.match(dead.status.reason, /GPU/i, `the refusal says why: ${dead.status.reason}`);

      // The holder's kernel crashes: its GPU is free again, however it ended.
      await holder.client.run(holder.notebookId, { [holder.cellId]: "import os\nos._exit(3)" });
      await holder.client.waitFor((event) => event.type === "kernel-status" && event.status.state === "dead");
      assert.deepEqual(await refused.client.send({ op: "restart", notebookId: refused.notebookId }), { ok: true });
      await refused.client.run(refused.notebookId, { [refused.cellId]: SHOW_GPUS });
      await refused.client.waitFor((event) => event.type === "cell-finished" && event.cellId === refused.cellId && streamOf(refused.client, refused.cellId) !== "");
      assert.equal(streamOf(refused.client, refused.cellId), `visible ${REFUSED_GPU.uuid}\n`);
    } finally {
      await refused.client.send({ op: "shutdown", notebookId: refused.notebookId });
      holder.client.close();
      refused.client.close();
    }
  });
});
