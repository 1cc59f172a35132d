/**
 * The hosts commands and a notebook's kernel spec over the real socket
 * edge, with the lab's hosts as LabHosts (a local host declaring one GPU
 * slot, and an SSH host whose link fails like ssh without a key): list-hosts
 * and check-host, set-kernel-spec's checks, the spec kept across a reopen
 * and an .ipynb round trip, and a restart that starts the kernel where the
 * spec says.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { LabHosts, localHostSpec, type LabHostSpec } from "../../server/hosts/lab-hosts";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { exportNotebook } from "../../server/ipynb/export";
import { importIpynb } from "../../server/ipynb/import";
import { LOCAL_USER } from "../../server/persistence";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import { SocketHarness, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 60_000 };
const SLOT = { index: 0, uuid: "GPU-00000000-0000-0000-0000-000000000000", name: "declared slot", memoryTotalMiB: null };

function labHosts(labId: string): LabHosts {
  const python = chooseInterpreter().executable;
  const local = localHostSpec(python, { gpus: [SLOT], leaseSeconds: 30 });
  // What `ssh -tt` does without a key: a message on the terminal, exit 255.
  const lost: LabHostSpec = {
    ...local,
    id: "gpu-lost",
    label: "lost GPU box",
    kind: "ssh",
    gpus: null,
    transport: {
      launchArgv: () => ["/bin/sh", "-c", "echo 'lab@gpu-lost: Permission denied (publickey).' >&2; exit 255"],
      describe: () => "lab@gpu-lost over ssh",
    },
  };
  return new LabHosts([local, lost], "local", labId, () => undefined);
}

describe("hosts commands and a notebook's kernel spec", () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-hosts-"));
  let harness: SocketHarness;
  let client: TestClient;

  before(async () => {
    harness = await SocketHarness.start({ dataDir, hosts: labHosts });
    client = await harness.client();
  });

  after(async () => {
    client?.close();
    await harness?.close({ keepData: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function openNew(c: TestClient, title: string): Promise<NotebookDocument> {
    const created = await c.sendLab({ op: "create-notebook", title });
    assert.ok(created.ok && created.notebook);
    const opened = await c.send({ op: "open", notebookId: created.notebook.id });
    assert.ok(opened.ok && opened.notebook);
    return opened.notebook;
  }

  it("lists the configured hosts without contacting them", LIMIT, async () => {
    const listed = await client.sendLab({ op: "list-hosts" });
    assert.ok(listed.ok && listed.hosts, JSON.stringify(listed));
    const [local, lost] = listed.hosts;
    assert.equal(listed.hosts.length, 2);
    assert.deepEqual([local?.id, local?.label, local?.kind, local?.link, local?.checkedAt], ["local", "this machine", "local", "disconnected", null]);
    assert.match(local?.target ?? "", /on this machine$/);
    assert.deepEqual([lost?.id, lost?.kind, lost?.target, lost?.link], ["gpu-lost", "ssh", "lab@gpu-lost over ssh", "disconnected"]);
    assert.equal(harness.lab.hosts?.agent("gpu-lost")?.state.state, "disconnected", "listing never connects");
  });

  it("refuses to check a host the lab does not have, naming its hosts", LIMIT, async () => {
    const checked = await client.sendLab({ op: "check-host", hostId: "nope" });
    assert.deepEqual(checked, { ok: false, code: "not-found", error: 'no host "nope" in this lab (its hosts: local, gpu-lost)' });
  });

  it("checks an unreachable host: its view has the error and what the link printed", LIMIT, async () => {
    const checked = await client.sendLab({ op: "check-host", hostId: "gpu-lost" });
    assert.ok(checked.ok && checked.host, JSON.stringify(checked));
    assert.equal(checked.host.link, "unreachable");
    assert.ok(checked.host.error, "the error is said");
    assert.ok(checked.host.checkedAt !== null);
    assert.match(checked.host.errorOutput ?? "", /Permission denied \(publickey\)/);
    // The list now shows the same, from cache, without trying again.
    const listed = await client.sendLab({ op: "list-hosts" });
    assert.ok(listed.ok && listed.hosts);
    assert.equal(listed.hosts.find((host) => host.id === "gpu-lost")?.link, "unreachable");
  });

  it("a new notebook's kernel starts on the default host with no GPU", LIMIT, async () => {
    const doc = await openNew(client, "default spec");
    assert.deepEqual(doc.kernelSpec, { hostId: "local", gpus: 0 });
  });

  it("refuses a kernel spec for an unknown host or more GPUs than the host has; changes nothing", LIMIT, async () => {
    const doc = await openNew(client, "bad specs");
    const unknown = await client.send({ op: "set-kernel-spec", notebookId: doc.id, hostId: "gpu9", gpus: 0 });
    assert.deepEqual(unknown, { ok: false, code: "not-found", error: 'no host "gpu9" in this lab (its hosts: local, gpu-lost)' });
    const tooMany = await client.send({ op: "set-kernel-spec", notebookId: doc.id, hostId: "local", gpus: 2 });
    assert.deepEqual(tooMany, { ok: false, code: "invalid", error: 'host "local" has 1 GPU: a kernel there cannot ask for 2' });
    const negative = await client.send({ op: "set-kernel-spec", notebookId: doc.id, hostId: "local", gpus: -1 });
    assert.equal(negative.ok, false);
    assert.equal(client.events.some((event) => event.type === "kernel-spec-changed"), false);
    const reopened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(reopened.ok && reopened.notebook);
    assert.deepEqual(reopened.notebook.kernelSpec, { hostId: "local", gpus: 0 });
  });

  it("keeps a spec across a reopen by a new server and an .ipynb round trip", LIMIT, async () => {
    const doc = await openNew(client, "kept spec");
    assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId: doc.id, hostId: "local", gpus: 1 }), { ok: true });
    const event = await client.waitFor((e) => e.type === "kernel-spec-changed");
    assert.deepEqual(event, { type: "kernel-spec-changed", spec: { hostId: "local", gpus: 1 } });

    // A new server on the same database.
    client.close();
    await harness.close({ keepData: true });
    harness = await SocketHarness.start({ dataDir, hosts: labHosts });
    client = await harness.client();
    const reopened = await client.send({ op: "open", notebookId: doc.id });
    assert.ok(reopened.ok && reopened.notebook);
    assert.deepEqual(reopened.notebook.kernelSpec, { hostId: "local", gpus: 1 });

    // Out to a file and back in as a new notebook.
    const notebooks = harness.lab.catalog.repos.notebooks;
    const { text } = await exportNotebook(notebooks, doc.id);
    assert.deepEqual((JSON.parse(text) as { metadata: { mgpulab: { kernelSpec: unknown } } }).metadata.mgpulab.kernelSpec, { hostId: "local", gpus: 1 });
    const hostIds = harness.lab.hosts?.ids();
    const imported = await importIpynb(notebooks, text, { ownerId: LOCAL_USER.id, title: "imported", hostIds });
    assert.deepEqual(imported.notes, []);
    const copy = await client.send({ op: "open", notebookId: imported.notebook.id });
    assert.ok(copy.ok && copy.notebook);
    assert.deepEqual(copy.notebook.kernelSpec, { hostId: "local", gpus: 1 });

    // Another lab's host: the default host, and a note saying so.
    const foreign = text.replace('"hostId": "local"', '"hostId": "gpu9"');
    assert.notEqual(foreign, text);
    const moved = await importIpynb(notebooks, foreign, { ownerId: LOCAL_USER.id, title: "foreign", hostIds });
    assert.deepEqual(moved.notes, ['metadata.mgpulab.kernelSpec: host "gpu9" is not one of this lab\'s hosts (local, gpu-lost); the notebook\'s kernels start on the default host']);
    const movedDoc = await client.send({ op: "open", notebookId: moved.notebook.id });
    assert.ok(movedDoc.ok && movedDoc.notebook);
    assert.deepEqual(movedDoc.notebook.kernelSpec, { hostId: "local", gpus: 1 });
  });

  it("starts the next kernel where the spec says: a restart goes to the spec's host", LIMIT, async () => {
    const doc = await openNew(client, "spec on restart");
    assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId: doc.id, hostId: "gpu-lost", gpus: 0 }), { ok: true });
    const hosts = harness.lab.hosts!;
    const localBefore = hosts.agent("local")!.state.state;
    assert.deepEqual(await client.send({ op: "restart", notebookId: doc.id }), { ok: true });
    const dead = await client.waitFor((event) => event.type === "kernel-status" && event.status.state === "dead");
    assert.ok(dead.type === "kernel-status" && dead.status.state === "dead");
    assert.equal(hosts.agent("gpu-lost")!.state.state, "unreachable", "the kernel was started on the spec's host");
    assert.equal(hosts.agent("local")!.state.state, localBefore, "not on the default host");
  });
});
