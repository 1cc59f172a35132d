/**
 * The lab on real remote hosts: a hosts.json names an SSH host (a real sshd
 * on 127.0.0.1) and a Slurm host (a real single-node Slurm); the lab server
 * runs cells there through each host's agent, zero-install (the agent's code
 * travels at start). Over SSH: run, interrupt, restart, DDP on 2 gloo ranks
 * and `%%ranks 2`; the connection cut mid-cell from either end (the ssh
 * client killed, or the session's sshd, as a dead network peer) and the lab
 * server SIGKILLed mid-cell: every line arrives once, in order; past the
 * lease nothing the agent started remains; a wrong port or key is a clear
 * error within the configured timeout.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { shownText, storedText } from "../helpers/cell-text";
import { running, waitUntil } from "../helpers/processes";
import { sshdUnavailable, startSshd, type TestSshd } from "../helpers/sshd";
import { slurmUnavailable, startSlurm, type TestSlurm } from "../helpers/slurm";

const LIMIT = { timeout: 180_000 };
const LINES = 200;
const NUMBERED = `import time\nfor i in range(${LINES}):\n    print(f'line {i}', flush=True)\n    time.sleep(0.01)\nprint('done')`;

const EXPECTED = [...Array.from({ length: LINES }, (_, i) => `line ${i}`), "done"];
/** DDP on 2 gloo ranks through the toolkit's launcher: a gradient all-reduced across the ranks. */
const DDP = [
  "import mgpulab as lab",
  "src = '''",
  "import torch, torch.distributed as dist",
  "from torch.nn.parallel import DistributedDataParallel as DDP",
  "model = DDP(torch.nn.Linear(4, 1))",
  "model(torch.ones(8, 4)).sum().backward()",
  "print('ddp', dist.get_backend(), dist.get_world_size(), model.module.weight.grad.shape[1])",
  "'''",
  "result = lab.launch_code(src, 2, init_process_group=True, time_limit_s=120)",
  "print('launched', result.ok)",
].join("\n");

/** Live processes whose environment carries this tag (the agent marks everything a kernel starts). */
function processesTagged(tag: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(tag) && running(Number(entry))) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

async function openNew(client: TestClient, title: string): Promise<{ notebookId: string; cellId: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook);
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  assert.ok(opened.ok && opened.notebook);
  return { notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id };
}

/** Runs the cell and waits for this run's end (not an earlier run's). */
async function runToEnd(client: TestClient, notebookId: string, cellId: string, code: string): Promise<string> {
  const from = client.events.length;
  const ran = await client.run(notebookId, { [cellId]: code });
  assert.ok(ran.ok, JSON.stringify(ran));
  const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.indexOf(event) >= from);
  assert.ok(finished.type === "cell-finished" && finished.status === "ok", JSON.stringify(finished));
  return shownText(client.events, cellId);
}

describe("a lab whose kernels run on an SSH host", { skip: sshdUnavailable() ?? false }, () => {
  let sshd: TestSshd;
  let dir: string;
  let hostsFile: string;
  let server: LabServer;
  const serverEnv = (): Record<string, string> => ({ MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") });
  before(async () => {
    sshd = await startSshd();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-ssh-lab-"));
    hostsFile = path.join(dir, "hosts.json");
    const ssh = { host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, options: sshd.sshOptions(), connectTimeoutSeconds: 3 };
    const wrongKey = path.join(dir, "wrong_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", wrongKey]);
    // The agent's runtime dir on the "remote" host: its own, so this test's agent is never another's.
    const common = { kind: "ssh", python: "/usr/bin/python3", runtimeDir: path.join(dir, "remote") };
    writeFileSync(
      hostsFile,
      JSON.stringify({
        hosts: [
          { ...common, id: "box", label: "box over ssh", leaseMinutes: 1, ssh },
          { ...common, id: "brief", label: "short lease", leaseMinutes: 0.05, runtimeDir: path.join(dir, "brief"), ssh },
          { ...common, id: "badport", ssh: { ...ssh, port: sshd.port === 65535 ? 1 : sshd.port + 1 } },
          { ...common, id: "badkey", ssh: { ...ssh, identityFile: wrongKey } },
        ],
        defaultHost: "box",
      }),
    );
    server = await LabServer.start(serverEnv());
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

  it("interrupts a running cell and restarts the kernel over the link", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await openNew(client, "interrupt over ssh");
      await runToEnd(client, notebookId, cellId, "x = 41");
      const pidOf = (events: NotebookEvent[]): number | null => {
        const idle = events.filter((event) => event.type === "kernel-status" && event.status.state === "idle").at(-1);
        return idle && idle.type === "kernel-status" && idle.status.state === "idle" ? idle.status.info.pid : null;
      };
      const before = pidOf(client.events);
      await client.run(notebookId, { [cellId]: "import time\nprint('sleeping', flush=True)\ntime.sleep(120)" });
      await client.waitFor(() => shownText(client.events, cellId).includes("sleeping"));
      const sent = client.events.length;
      assert.deepEqual(await client.send({ op: "interrupt", notebookId }), { ok: true });
      const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.indexOf(event) >= sent);
      assert.ok(finished.type === "cell-finished" && finished.status === "interrupted", JSON.stringify(finished));
      assert.equal(await runToEnd(client, notebookId, cellId, "print(x + 1)"), "42\n", "the kernel kept its namespace: SIGINT stopped only the cell");

      const restarted = client.events.length;
      assert.deepEqual(await client.send({ op: "restart", notebookId }), { ok: true });
      await client.waitFor((event) => event.type === "kernel-status" && event.status.state === "idle" && client.events.indexOf(event) >= restarted);
      assert.notEqual(pidOf(client.events), before, "a new kernel process");
      assert.equal(await runToEnd(client, notebookId, cellId, "print('x' in globals())"), "False\n");
    } finally {
      client.close();
    }
  });

  it("runs DDP on 2 gloo ranks and a %%ranks 2 cell on the host", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await openNew(client, "ranks over ssh");
      const ddp = await runToEnd(client, notebookId, cellId, DDP);
      assert.match(ddp, /\[rank 0\] ddp gloo 2 4/);
      assert.match(ddp, /\[rank 1\] ddp gloo 2 4/);
      assert.match(ddp, /launched True/);
      const before = client.events.length;
      await client.run(notebookId, { [cellId]: "%%ranks 2\nimport torch, torch.distributed as dist\nt = torch.ones(1) * (dist.get_rank() + 1)\ndist.all_reduce(t)\nprint('sum', t.item())" });
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.indexOf(event) >= before);
      const text = shownText(client.events, cellId);
      assert.match(text, /sum 3\.0/);
      assert.match(text, /\[ranks\] ok/);
    } finally {
      client.close();
    }
  });

  for (const end of ["the ssh client", "the session's sshd"] as const) {
    it(`the SSH connection drops while a cell prints (${end} killed): the lab reconnects and every line arrives once, in order`, LIMIT, async () => {
      const client = await connectClient(server.url);
      try {
        const { notebookId, cellId } = await openNew(client, `ssh drop: ${end}`);
        const ran = await client.run(notebookId, { [cellId]: NUMBERED });
        assert.ok(ran.ok);
        await client.waitFor(() => shownText(client.events, cellId).split("\n").length > 30);
        if (end === "the ssh client") execFileSync("pkill", ["-KILL", "-P", String(server.pid), "-x", "ssh"]);
        // The per-connection sshd processes ("sshd: <user>…"), not the listener: a dead network peer for ssh.
        else execFileSync("pkill", ["-KILL", "-f", `^sshd: ${sshd.user}`]);
        await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
        assert.deepEqual(shownText(client.events, cellId).split("\n").filter(Boolean), EXPECTED);
        const reopened = await client.send({ op: "open", notebookId });
        assert.ok(reopened.ok && reopened.notebook);
        assert.deepEqual(storedText(reopened.notebook, cellId).split("\n").filter(Boolean), EXPECTED);
        assert.ok(server.logs.some((line) => line.includes("reconnecting")), "the server noticed the drop");
      } finally {
        client.close();
      }
    });
  }

  it("SIGKILL of the lab server while a cell prints on the SSH host: the next server finds it still running, and every line is there once", LIMIT, async () => {
    const client = await connectClient(server.url);
    const { notebookId, cellId } = await openNew(client, "ssh takeover");
    await client.run(notebookId, { [cellId]: NUMBERED });
    await client.waitFor(() => shownText(client.events, cellId).split("\n").length > 30);
    await server.stop("SIGKILL");
    client.close();
    server = await LabServer.start(serverEnv());
    const viewer = await connectClient(server.url);
    try {
      const opened = await viewer.send({ op: "open", notebookId });
      assert.ok(opened.ok && opened.notebook);
      const cell = opened.notebook.cells.find((candidate) => candidate.id === cellId)!;
      assert.ok(server.logs.some((line) => line.includes("took over the kernel")), "the kernel was still running and taken over");
      if (cell.runState !== "idle") await viewer.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
      const reopened = await viewer.send({ op: "open", notebookId });
      assert.ok(reopened.ok && reopened.notebook);
      assert.deepEqual(storedText(reopened.notebook, cellId).split("\n").filter(Boolean), EXPECTED);
    } finally {
      viewer.close();
    }
  });

  it("past the lease, no process the agent started remains on the host", LIMIT, async () => {
    const client = await connectClient(server.url);
    const { notebookId, cellId } = await openNew(client, "lease over ssh");
    assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId, hostId: "brief", gpus: 0 }), { ok: true });
    const code = "import os, subprocess, time\np = subprocess.Popen(['sleep', '600'], start_new_session=True)\nprint('tag', os.environ['MGPULAB_AGENT_KERNEL'], flush=True)\ntime.sleep(600)";
    await client.run(notebookId, { [cellId]: code });
    await client.waitFor(() => /tag \S+/.test(shownText(client.events, cellId)));
    const tag = `MGPULAB_AGENT_KERNEL=${/tag (\S+)/.exec(shownText(client.events, cellId))![1]}`;
    assert.ok(processesTagged(tag).length >= 2, "the kernel and its setsid child run");
    client.close();
    // Every link to the short-lease host goes with the server (its ssh is the server's child).
    await server.stop("SIGKILL");
    await waitUntil(() => processesTagged(tag).length === 0, 30_000, "every process the kernel started ends with the lease");
    server = await LabServer.start(serverEnv());
  });

  for (const [hostId, what] of [["badport", "a port nothing listens on"], ["badkey", "a key the host refuses"]] as const) {
    it(`a host with ${what} is a clear error within its connect timeout`, LIMIT, async () => {
      const client = await connectClient(server.url);
      try {
        const began = Date.now();
        const checked = await client.sendLab({ op: "check-host", hostId });
        const tookMs = Date.now() - began;
        assert.ok(checked.ok && checked.host, JSON.stringify(checked));
        const view = checked.host;
        assert.equal(view.link, "unreachable", JSON.stringify(view));
        const said = `${view.error ?? ""} ${view.errorOutput ?? ""}`;
        assert.match(said, hostId === "badport" ? /Connection refused|connect to host/i : /Permission denied/i);
        assert.doesNotMatch(said, /[\r\u001b]/, "no terminal control characters in what the page shows");
        assert.ok(tookMs < 3_000 + 5_000, `answered in ${tookMs} ms (connect timeout 3 s)`);
      } finally {
        client.close();
      }
    });
  }
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

describe("a lab with a hosts file it cannot use as a whole", () => {
  it("refuses to start, naming the file and every bad field (JSON errors by line and column), without a stack trace", LIMIT, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-bad-hosts-"));
    try {
      const hostsFile = path.join(dir, "hosts.json");
      // A bad host entry is only left out (hosts-day-two.test.ts); a bad file is the operator's to fix first.
      writeFileSync(hostsFile, JSON.stringify({ hots: [], healthIntervalSeconds: 0 }));
      await assert.rejects(LabServer.start({ MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") }), (error: Error) => {
        assert.match(error.message, /multi-gpu-lab failed to start: .*hosts\.json: /);
        assert.match(error.message, /hosts\.json: hots: unknown key \(a typo\?\)/);
        assert.match(error.message, /hosts\.json: healthIntervalSeconds: expected a number of seconds above 0/);
        assert.doesNotMatch(error.message, /\n\s+at /, "no stack trace");
        return true;
      });
      writeFileSync(hostsFile, '{\n  "hosts": [\n    { "id": "gpu1" "kind": "ssh" }\n  ]\n}\n');
      await assert.rejects(LabServer.start({ MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") }), (error: Error) => {
        assert.match(error.message, /hosts\.json: not valid JSON: line 3, column 20: expected "," or "}" after a value/);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
