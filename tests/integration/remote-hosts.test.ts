/**
 * The lab on real remote hosts: a hosts.json names an SSH host (a real sshd
 * on 127.0.0.1) and a Slurm host (a real single-node Slurm); the lab server
 * runs cells there through each host's agent, zero-install (the agent's code
 * travels at start). Over SSH, the connection is cut mid-cell (the session's
 * sshd killed, as a dropped network): the lab reconnects, the agent kept the
 * kernel, and every line arrives once, in order.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { NotebookDocument } from "../../server/core/protocol/notebook-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { sshdUnavailable, startSshd, type TestSshd } from "../helpers/sshd";
import { slurmUnavailable, startSlurm, type TestSlurm } from "../helpers/slurm";

const LIMIT = { timeout: 180_000 };
const LINES = 200;
const NUMBERED = `import time\nfor i in range(${LINES}):\n    print(f'line {i}', flush=True)\n    time.sleep(0.01)\nprint('done')`;

function streamText(events: NotebookEvent[], cellId: string): string {
  let text = "";
  for (const event of events) {
    if (event.type === "cell-stream" && event.cellId === cellId) text += event.text;
    if (event.type === "cell-outputs-cleared" && event.cellId === cellId) text = "";
  }
  return text;
}

function storedText(doc: NotebookDocument, cellId: string): string {
  return doc.cells.find((cell) => cell.id === cellId)!.outputs.map((output) => (output.kind === "stream" ? output.text : "")).join("");
}

async function openNew(client: TestClient, title: string): Promise<{ notebookId: string; cellId: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  assert.ok(opened.ok && opened.notebook);
  return { notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id };
}

async function runToEnd(client: TestClient, notebookId: string, cellId: string, code: string): Promise<string> {
  const ran = await client.run(notebookId, { [cellId]: code });
  assert.ok(ran.ok, JSON.stringify(ran));
  const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
  assert.ok(finished.type === "cell-finished" && finished.status === "ok", JSON.stringify(finished));
  return streamText(client.events, cellId);
}

describe("a lab whose kernels run on an SSH host", { skip: sshdUnavailable() ?? false }, () => {
  let sshd: TestSshd;
  let dir: string;
  let server: LabServer;
  before(async () => {
    sshd = await startSshd();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-ssh-lab-"));
    const hostsFile = path.join(dir, "hosts.json");
    const ssh = { host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, options: sshd.sshOptions(), connectTimeoutSeconds: 5 };
    // The agent's runtime dir on the "remote" host: its own, so this test's agent is never another's.
    writeFileSync(hostsFile, JSON.stringify({ hosts: [{ id: "box", kind: "ssh", label: "box over ssh", python: "/usr/bin/python3", runtimeDir: path.join(dir, "remote"), leaseMinutes: 1, ssh }], defaultHost: "box" }));
    server = await LabServer.start({ MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") });
  });
  after(async () => {
    await server?.stop("SIGTERM");
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a cell on the host through its agent, and the notebook says where", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await openNew(client, "on ssh");
      const text = await runToEnd(client, notebookId, cellId, "import os\nprint('agent kernel', 'MGPULAB_AGENT_KERNEL' in os.environ)");
      assert.equal(text, "agent kernel True\n");
      const status = client.events.filter((event) => event.type === "kernel-status").map((event) => (event.type === "kernel-status" ? event.status : null)).find((s) => s?.state === "idle");
      assert.ok(status && status.state === "idle");
      assert.deepEqual(status.info.host, { id: "box", label: "box over ssh" });
    } finally {
      client.close();
    }
  });

  it("the SSH connection drops while a cell prints: the lab reconnects and every line arrives once, in order", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await openNew(client, "ssh drop");
      const ran = await client.run(notebookId, { [cellId]: NUMBERED });
      assert.ok(ran.ok);
      await client.waitFor(() => streamText(client.events, cellId).split("\n").length > 30);
      // The per-connection sshd processes ("sshd: <user>…"), not the listener: a dead network peer for ssh.
      execFileSync("pkill", ["-KILL", "-f", `^sshd: ${sshd.user}`]);
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      const expected = [...Array.from({ length: LINES }, (_, i) => `line ${i}`), "done"];
      assert.deepEqual(streamText(client.events, cellId).split("\n").filter(Boolean), expected);
      const reopened = await client.send({ op: "open", notebookId });
      assert.ok(reopened.ok && reopened.notebook);
      assert.deepEqual(storedText(reopened.notebook, cellId).split("\n").filter(Boolean), expected);
      assert.ok(server.logs.some((line) => line.includes("reconnecting")), "the server noticed the drop");
    } finally {
      client.close();
    }
  });
});

describe("a lab whose kernels run on a Slurm host", { skip: slurmUnavailable() ?? false }, () => {
  let slurm: TestSlurm;
  let dir: string;
  let server: LabServer;
  before(async () => {
    slurm = await startSlurm();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-slurm-lab-"));
    const hostsFile = path.join(dir, "hosts.json");
    writeFileSync(
      hostsFile,
      JSON.stringify({ hosts: [{ id: "hpc", kind: "slurm", label: "the cluster", python: "/usr/bin/python3", runtimeDir: path.join(dir, "remote"), leaseMinutes: 1, slurm: { sbatchArgs: [], gpusPerAgent: 1 } }], defaultHost: "hpc" }),
    );
    server = await LabServer.start({ ...slurm.env, MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") });
  });
  after(async () => {
    await server?.stop("SIGTERM");
    await slurm?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a cell inside the agent's Slurm job, with the GPU Slurm gave it", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await openNew(client, "on slurm");
      const text = await runToEnd(client, notebookId, cellId, "import os\nprint('job', bool(os.environ.get('SLURM_JOB_ID')), 'agent kernel', 'MGPULAB_AGENT_KERNEL' in os.environ)");
      assert.equal(text, "job True agent kernel True\n");
      const jobs = slurm.run(["squeue", "-h", "-o", "%j"]).stdout;
      assert.match(jobs, /mgpulab-/, "the agent lives in its own Slurm job");
    } finally {
      client.close();
    }
  });
});
