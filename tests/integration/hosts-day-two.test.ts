/**
 * GPU hosts on day two, with a real sshd on 127.0.0.1 as the remote host (and
 * the test Slurm for its GPU visibility), through the real lab server:
 * - a changed hosts file takes effect after a restart within the lease (the
 *   queue policy, the GPU list: a GPU a running kernel holds stays with it);
 * - a free GPU is never idle without a reason: a 1-GPU request waits behind
 *   a 2-GPU one, and the hosts page shows the GPU reserved for it and the
 *   queue (who, how many, since when); a queued kernel's shutdown is answered;
 * - a refused kernel waits, names who holds the GPU, and runs on Retry;
 * - a typo in one remote host leaves the lab serving local kernels;
 * - a link that stops answering (the ssh client stopped with SIGSTOP) is
 *   marked in the notebook within 15 s, and recovered or reopened within 45 s
 *   with every line once;
 * - past the lease, nothing of the lab is left on the host but a bounded log;
 * - a Slurm kernel that asked for no GPU sees none.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { GpuWaitView, KernelStatus } from "../../server/core/protocol/notebook-model";
import type { HostView } from "../../server/core/protocol/hosts-model";
import type { NotebookEvent } from "../../server/core/protocol/socket-api";
import { LabServer } from "../helpers/lab-server";
import { signIn } from "../helpers/lab-session";
import { connectClient, type TestClient } from "../helpers/socket-harness";
import { shownText, storedText } from "../helpers/cell-text";
import { waitUntil } from "../helpers/processes";
import { sshdUnavailable, startSshd, type TestSshd } from "../helpers/sshd";
import { slurmUnavailable, startSlurm, type TestSlurm } from "../helpers/slurm";

const LIMIT = { timeout: 240_000 };
const G0 = { index: 0, uuid: "GPU-30000000-0000-0000-0000-000000000000", name: "Declared 0", memoryTotalMiB: 81_559 };
const G1 = { index: 1, uuid: "GPU-30000000-0000-0000-0000-000000000001", name: "Declared 1", memoryTotalMiB: 81_559 };
const SHOW_GPUS = "import os\nprint('visible', os.environ.get('CUDA_VISIBLE_DEVICES'))";

function statuses(client: TestClient, from = 0): KernelStatus[] {
  return client.events.slice(from).flatMap((event) => (event.type === "kernel-status" ? [event.status] : []));
}

function waitStatus(client: TestClient, test: (status: KernelStatus) => boolean, from = 0): Promise<NotebookEvent> {
  return client.waitFor((event) => event.type === "kernel-status" && test(event.status) && client.events.indexOf(event) >= from);
}

async function notebook(client: TestClient, title: string, hostId?: string, gpus = 0): Promise<{ notebookId: string; cellId: string }> {
  const created = await client.sendLab({ op: "create-notebook", title });
  assert.ok(created.ok && created.notebook, JSON.stringify(created));
  const opened = await client.send({ op: "open", notebookId: created.notebook.id });
  assert.ok(opened.ok && opened.notebook);
  if (hostId !== undefined) assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId: created.notebook.id, hostId, gpus }), { ok: true });
  return { notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id };
}

/** A new notebook open in a client of its own. */
async function ownNotebook(server: LabServer, title: string, hostId?: string, gpus = 0): Promise<{ client: TestClient; notebookId: string; cellId: string }> {
  const client = await connectClient(server.url);
  return { client, ...(await notebook(client, title, hostId, gpus)) };
}

/** Runs the cell and waits for this run's end; its status and what it printed. */
async function runToEnd(client: TestClient, notebookId: string, cellId: string, code: string): Promise<{ status: string; text: string }> {
  const from = client.events.length;
  const ran = await client.run(notebookId, { [cellId]: code });
  assert.ok(ran.ok, JSON.stringify(ran));
  const finished = await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.indexOf(event) >= from);
  assert.ok(finished.type === "cell-finished");
  return { status: finished.status, text: shownText(client.events.slice(from), cellId) };
}

async function hostView(client: TestClient, hostId: string): Promise<HostView> {
  const listed = await client.sendLab({ op: "list-hosts" });
  assert.ok(listed.ok && listed.hosts, JSON.stringify(listed));
  const view = listed.hosts.find((host) => host.id === hostId);
  assert.ok(view, `host ${hostId} is listed: ${listed.hosts.map((host) => host.id).join(", ")}`);
  return view;
}

/** Polls the hosts list (the agent's health is asked on each list) until `test` holds. */
async function hostViewUntil(client: TestClient, hostId: string, test: (view: HostView) => boolean, what: string): Promise<HostView> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view = await hostView(client, hostId);
    if (test(view)) return view;
    if (Date.now() > deadline) assert.fail(`${what}: ${JSON.stringify(view)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The ssh clients the lab server runs (one per open link to an ssh host). */
function sshClientsOf(serverPid: number): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(serverPid), "-x", "ssh"], { encoding: "utf8" }).trim().split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("GPU hosts on day two, over a real sshd", { skip: sshdUnavailable() ?? false }, () => {
  let sshd: TestSshd;
  let dir: string;
  const servers: LabServer[] = [];
  before(async () => {
    sshd = await startSshd();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-day-two-"));
  });
  /** ssh clients a test stopped: continued whatever happens to the test, so no server waits on one. */
  const stopped = new Set<number>();
  after(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone already
      }
    }
    for (const server of servers) await server.stop("SIGTERM");
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A hosts file with these hosts (on the test sshd), and a lab server on it with its own data dir. */
  async function labWith(name: string, hosts: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Promise<{ server: LabServer; hostsFile: string; env: Record<string, string> }> {
    const hostsFile = path.join(dir, `${name}.json`);
    writeHosts(hostsFile, hosts, extra);
    const env = { MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, `${name}-data`) };
    const server = await LabServer.start(env);
    servers.push(server);
    return { server, hostsFile, env };
  }

  function writeHosts(file: string, hosts: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): void {
    const ssh = { host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, options: sshd.sshOptions(), connectTimeoutSeconds: 5 };
    // Each host's agent keeps its own runtime dir on the "remote" host, so the tests can look at what it leaves.
    const entries = hosts.map((host) => ({ kind: "ssh", python: "/usr/bin/python3", runtimeDir: path.join(dir, `remote-${String(host.id)}`), ssh, ...host }));
    writeFileSync(file, JSON.stringify({ hosts: entries, ...extra }));
  }

  it("a whenFull and a GPU-list change take effect after a restart within the lease", LIMIT, async () => {
    const lab = await labWith("changed", [{ id: "box", leaseMinutes: 2, gpus: [G0, G1], whenFull: "queue" }], { defaultHost: "box" });
    let server = lab.server;
    let client = await connectClient(server.url);
    const holder = await notebook(client, "holds GPU 0", "box", 1);
    assert.equal((await runToEnd(client, holder.notebookId, holder.cellId, SHOW_GPUS)).text, `visible ${G0.uuid}\n`);
    client.close();

    // Restarted within the lease, with a file that refuses when full and lists GPU 1 only.
    await server.stop("SIGTERM");
    writeHosts(lab.hostsFile, [{ id: "box", leaseMinutes: 2, gpus: [G1], whenFull: "refuse" }], { defaultHost: "box" });
    server = await LabServer.start(lab.env);
    servers.push(server);
    assert.ok(server.logs.some((line) => line.includes("took over the kernel")), "the holder's kernel outlived the restart");
    client = await connectClient(server.url);
    try {
      const view = await hostViewUntil(client, "box", (candidate) => candidate.gpus.some((gpu) => gpu.heldBy !== null), "the agent reports its GPUs");
      assert.deepEqual(
        view.gpus.map((gpu) => [gpu.uuid, gpu.heldBy?.title ?? null, gpu.retiring]),
        [
          [G1.uuid, null, false],
          [G0.uuid, "holds GPU 0", true],
        ],
        "GPU 1 is offered; GPU 0 left the file but stays with the kernel holding it",
      );
      assert.ok(view.settings?.notes.some((note) => note.message === "when full: refuse (was queue)"), JSON.stringify(view.settings));
      assert.ok(server.logs.some((line) => line.includes("when full: refuse (was queue)")), "the log says what the agent took from the file");
      assert.match(view.settings?.kept.join("\n") ?? "", /GPU 0 .* is no longer in the hosts file; Local user's 'holds GPU 0' holds it/);

      // The lab and its agent agree: one GPU to offer.
      assert.ok((await client.send({ op: "open", notebookId: holder.notebookId })).ok);
      const refusedSpec = await client.send({ op: "set-kernel-spec", notebookId: holder.notebookId, hostId: "box", gpus: 2 });
      assert.ok(!refusedSpec.ok && /has 1 GPU/.test(refusedSpec.error), JSON.stringify(refusedSpec));
      const second = await notebook(client, "takes GPU 1", "box", 1);
      assert.equal((await runToEnd(client, second.notebookId, second.cellId, SHOW_GPUS)).text, `visible ${G1.uuid}\n`);
      // Full now, and the host refuses (it used to queue).
      const third = await notebook(client, "is refused", "box", 1);
      const from = client.events.length;
      const ran = await runToEnd(client, third.notebookId, third.cellId, SHOW_GPUS);
      assert.equal(ran.status, "no-kernel");
      const refused = statuses(client, from).find((status) => status.state === "refused");
      assert.ok(refused?.state === "refused", JSON.stringify(statuses(client, from)));
      assert.deepEqual([refused.wait.asked, refused.wait.free, refused.wait.total], [1, 0, 1]);
      for (const each of [holder, second]) await client.send({ op: "shutdown", notebookId: each.notebookId });
    } finally {
      client.close();
    }
  });

  it("SIGHUP reloads the edited hosts file without a restart: checked whole first, and the running agent takes its settings", LIMIT, async () => {
    const { server, hostsFile } = await labWith("reload", [{ id: "box", leaseMinutes: 1, gpus: [G0], whenFull: "queue" }], { defaultHost: "box" });
    const holder = await ownNotebook(server, "holds the GPU", "box", 1);
    const waiter = await ownNotebook(server, "waits", "box", 1);
    try {
      await runToEnd(holder.client, holder.notebookId, holder.cellId, SHOW_GPUS);
      assert.ok((await waiter.client.run(waiter.notebookId, { [waiter.cellId]: SHOW_GPUS })).ok);
      await waitStatus(waiter.client, (status) => status.state === "starting" && status.queue?.position === 1);

      // A file that is not JSON is refused whole: the hosts stay as they were.
      writeFileSync(hostsFile, '{ "hosts": [ ');
      process.kill(server.pid, "SIGHUP");
      await waitUntil(() => server.logs.some((line) => line.includes("hosts file not reloaded")), 30_000, "the refused reload is logged");
      assert.ok(server.logs.some((line) => line.includes("hosts file not reloaded") && line.includes("not valid JSON: line 1, column 14")), "with where the file breaks");

      // Refuse when full now, one more host, and a typo in a third: the agent takes it, the waiting kernel is refused.
      writeHosts(hostsFile, [{ id: "box", leaseMinutes: 1, gpus: [G0], whenFull: "refuse" }, { id: "spare" }, { id: "typo", pythn: "python3" }], { defaultHost: "box" });
      process.kill(server.pid, "SIGHUP");
      const refused = await waitStatus(waiter.client, (status) => status.state === "refused");
      assert.ok(refused.type === "kernel-status" && refused.status.state === "refused");
      assert.match(refused.status.reason, /held by Local user's 'holds the GPU'/);
      await waitUntil(() => server.logs.some((line) => line.includes('"msg":"hosts file reloaded"')), 30_000, "the reload is logged");
      const reloaded = server.logs.find((line) => line.includes('"msg":"hosts file reloaded"')) ?? "";
      assert.match(reloaded, /"added":\["spare"\]/);
      const listed = await holder.client.sendLab({ op: "list-hosts" });
      assert.ok(listed.ok && listed.hosts);
      assert.deepEqual(listed.hosts.map((host) => host.id), ["local", "box", "spare", "typo"]);
      const box = listed.hosts.find((host) => host.id === "box")!;
      assert.ok(box.settings?.notes.some((note) => note.message === "when full: refuse (was queue)"), JSON.stringify(box.settings));
      assert.deepEqual(listed.hosts.find((host) => host.id === "typo")?.problem, [`${hostsFile}: hosts[2].pythn: unknown key (a typo?)`]);
      assert.equal((await runToEnd(holder.client, holder.notebookId, holder.cellId, "print('still here')")).text, "still here\n", "the running kernel went on");
      await holder.client.send({ op: "shutdown", notebookId: holder.notebookId });
    } finally {
      holder.client.close();
      waiter.client.close();
    }
  });

  it("a 1-GPU request waits behind a 2-GPU one with the free GPU shown reserved; the queue is listed; a queued kernel's shutdown is answered", LIMIT, async () => {
    const { server } = await labWith("queue", [{ id: "pair", leaseMinutes: 1, gpus: [G0, G1], whenFull: "queue" }]);
    // One client per notebook: the events a client hears do not say which notebook they are of.
    const holder = await ownNotebook(server, "holder", "pair", 1);
    const big = await ownNotebook(server, "DDP sweep", "pair", 2);
    const small = await ownNotebook(server, "small one", "pair", 1);
    try {
      await runToEnd(holder.client, holder.notebookId, holder.cellId, SHOW_GPUS);
      assert.ok((await big.client.run(big.notebookId, { [big.cellId]: SHOW_GPUS })).ok);
      await waitStatus(big.client, (status) => status.state === "starting" && status.queue?.position === 1);
      assert.ok((await small.client.run(small.notebookId, { [small.cellId]: SHOW_GPUS })).ok);
      const queued = await waitStatus(small.client, (status) => status.state === "starting" && status.queue?.position === 2 && status.queue.wait !== undefined);
      assert.ok(queued.type === "kernel-status" && queued.status.state === "starting" && queued.status.queue?.wait);
      const wait: GpuWaitView = queued.status.queue.wait;
      assert.deepEqual([wait.asked, wait.free, wait.total], [1, 1, 2], "one GPU is free, and still it waits: the first in line needs two");
      assert.deepEqual(wait.ahead.map((user) => [user.owner, user.title, user.gpus]), [["Local user", "DDP sweep", 2]]);
      assert.deepEqual(wait.holders.map((user) => [user.owner, user.title, user.gpus]), [["Local user", "holder", 1]]);

      const view = await hostViewUntil(holder.client, "pair", (candidate) => candidate.queue.length === 2, "the hosts page lists the queue");
      assert.deepEqual(view.gpus.map((gpu) => [gpu.heldBy?.title ?? null, gpu.reservedFor?.title ?? null, gpu.reservedFor?.gpus ?? null]), [
        ["holder", null, null],
        [null, "DDP sweep", 2],
      ]);
      assert.deepEqual(view.queue.map((user) => [user.owner, user.title, user.gpus]), [
        ["Local user", "DDP sweep", 2],
        ["Local user", "small one", 1],
      ]);
      assert.ok(view.queue.every((user) => user.since !== null && user.since <= Date.now()) && view.gpus[0]!.heldBy?.since !== null);

      // A kernel waiting in the queue is shut down: answered at once, and it says it left the queue.
      const shutFrom = small.client.events.length;
      const began = Date.now();
      assert.deepEqual(await small.client.send({ op: "shutdown", notebookId: small.notebookId }), { ok: true });
      assert.ok(Date.now() - began < 10_000, `the shutdown was answered in ${Date.now() - began} ms`);
      const shut = await waitStatus(small.client, (status) => status.state === "shutdown", shutFrom);
      assert.ok(shut.type === "kernel-status" && shut.status.state === "shutdown");
      assert.match(shut.status.reason ?? "", /left the GPU queue/);
      assert.ok(!statuses(small.client, shutFrom).some((status) => status.state === "dead"), "no 'dead' on the way");

      // The holder ends: the first in line gets both GPUs.
      await holder.client.send({ op: "shutdown", notebookId: holder.notebookId });
      const bigDone = await big.client.waitFor((event) => event.type === "cell-finished" && event.cellId === big.cellId);
      assert.ok(bigDone.type === "cell-finished" && bigDone.status === "ok", JSON.stringify(bigDone));
      assert.match(shownText(big.client.events, big.cellId), new RegExp(`visible ${G0.uuid},${G1.uuid}|visible ${G1.uuid},${G0.uuid}`));
      await big.client.send({ op: "shutdown", notebookId: big.notebookId });
      assert.ok(!server.logs.some((line) => /unhandledRejection|Unhandled/i.test(line)), "no promise of the hosts layer went unhandled");
    } finally {
      for (const each of [holder, big, small]) each.client.close();
    }
  });

  it("a refused kernel waits, names who holds the GPU, asks again on the next run, and runs on Retry once the GPU is free", LIMIT, async () => {
    const { server } = await labWith("refused", [{ id: "strict", leaseMinutes: 1, gpus: [G0], whenFull: "refuse" }]);
    const admin = await connectClient(server.url);
    for (const [name, email] of [["Ana", "ana@example.com"], ["Bob", "bob@example.com"]]) {
      assert.ok((await admin.sendLab({ op: "create-user", name, email, password: "a long enough password", role: "member" })).ok);
    }
    admin.close();
    const ana = await connectClient(server.url, await signIn(server.url, "ana@example.com", "a long enough password"));
    const bob = await connectClient(server.url, await signIn(server.url, "bob@example.com", "a long enough password"));
    try {
      const sweep = await notebook(ana, "DDP sweep", "strict", 1);
      assert.ok((await ana.sendLab({ op: "share-notebook", notebookId: sweep.notebookId, email: "bob@example.com", access: "read" })).ok);
      assert.equal((await runToEnd(ana, sweep.notebookId, sweep.cellId, SHOW_GPUS)).text, `visible ${G0.uuid}\n`);

      const mine = await notebook(bob, "Bob's run", "strict", 1);
      const from = bob.events.length;
      const first = await runToEnd(bob, mine.notebookId, mine.cellId, SHOW_GPUS);
      assert.equal(first.status, "no-kernel", "the cell says it never ran, not that an earlier cell failed");
      const refused = statuses(bob, from).find((status) => status.state === "refused");
      assert.ok(refused?.state === "refused", `refused, not dead: ${JSON.stringify(statuses(bob, from))}`);
      assert.match(refused.reason, /no GPU free on .*: 1 asked, 0 free; held by Ana's 'DDP sweep'/);
      assert.doesNotMatch(refused.reason, /GPU-3|k-[0-9a-f]{8}/, "no internal ids");
      assert.deepEqual(refused.wait.holders.map((user) => [user.owner, user.title, user.gpus, typeof user.since]), [["Ana", "DDP sweep", 1, "number"]]);

      // Running again asks the host again (no "kernel died" until a restart).
      const again = bob.events.length;
      assert.equal((await runToEnd(bob, mine.notebookId, mine.cellId, SHOW_GPUS)).status, "no-kernel");
      assert.ok(statuses(bob, again).some((status) => status.state === "starting") && statuses(bob, again).at(-1)?.state === "refused");

      // Ana is done: Retry starts Bob's kernel on the freed GPU.
      assert.deepEqual(await ana.send({ op: "shutdown", notebookId: sweep.notebookId }), { ok: true });
      const retried = bob.events.length;
      assert.deepEqual(await bob.send({ op: "restart", notebookId: mine.notebookId }), { ok: true });
      const idle = await waitStatus(bob, (status) => status.state === "idle", retried);
      assert.ok(idle.type === "kernel-status" && idle.status.state === "idle");
      assert.deepEqual(idle.status.info.gpus, [G0.uuid]);
      assert.deepEqual(await runToEnd(bob, mine.notebookId, mine.cellId, SHOW_GPUS), { status: "ok", text: `visible ${G0.uuid}\n` });
      await bob.send({ op: "shutdown", notebookId: mine.notebookId });
    } finally {
      ana.close();
      bob.close();
    }
  });

  it("a typo in one remote host leaves the lab serving local kernels, and says why on /hosts, at start, and to its notebooks", LIMIT, async () => {
    const { server } = await labWith("typo", [{ id: "gpu1", leaseMinuts: 5 }], { defaultHost: "gpu1" });
    assert.ok(
      server.logs.some((line) => line.includes("host gpu1 is left out") && line.includes("hosts[0].leaseMinuts: unknown key")),
      "the start names the entry and its problem",
    );
    const client = await connectClient(server.url);
    try {
      const view = await hostView(client, "gpu1");
      assert.deepEqual(view.problem, [`${path.join(dir, "typo.json")}: hosts[0].leaseMinuts: unknown key (a typo?)`]);
      const local = await notebook(client, "local work", "local", 0);
      assert.deepEqual(await runToEnd(client, local.notebookId, local.cellId, "print(6 * 7)"), { status: "ok", text: "42\n" });

      // A notebook on the left-out host (the default) is told why its kernel cannot start.
      const remote = await notebook(client, "on the broken host");
      const from = client.events.length;
      assert.equal((await runToEnd(client, remote.notebookId, remote.cellId, "print(1)")).status, "no-kernel");
      const dead = statuses(client, from).find((status) => status.state === "dead");
      assert.ok(dead?.state === "dead", JSON.stringify(statuses(client, from)));
      assert.match(dead.reason, /host "gpu1" is left out of the lab: .*leaseMinuts: unknown key/);
      assert.doesNotMatch(dead.reason, /[\r\u001b]/);
    } finally {
      client.close();
    }
  });

  for (const outcome of ["recovers", "is reopened"] as const) {
    it(`a link that stops answering is marked stalled in the notebook within 15 s, and ${outcome} within 45 s with every line once`, LIMIT, async () => {
      const { server } = await labWith(`stall-${outcome === "recovers" ? "a" : "b"}`, [{ id: "far", leaseMinutes: 2 }], { defaultHost: "far" });
      const client = await connectClient(server.url);
      try {
        const { notebookId, cellId } = await notebook(client, `stalls and ${outcome}`);
        const lines = 250;
        const expected = [...Array.from({ length: lines }, (_, i) => `tick ${i}`), "done"];
        const code = `import time\nfor i in range(${lines}):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.1)\nprint('done')`;
        assert.ok((await client.run(notebookId, { [cellId]: code })).ok);
        await client.waitFor(() => shownText(client.events, cellId).split("\n").length > 20);
        const [ssh, ...others] = sshClientsOf(server.pid);
        assert.ok(ssh !== undefined && others.length === 0, `one ssh link: ${[ssh, ...others].join(", ")}`);
        const from = client.events.length;
        stopped.add(ssh);
        process.kill(ssh, "SIGSTOP");
        const stoppedAt = Date.now();
        try {
          const stalled = await waitStatus(client, (status) => status.state === "busy" && status.link?.state === "stalled", from);
          const shownAfterMs = Date.now() - stoppedAt;
          assert.ok(shownAfterMs <= 15_000, `stalled shown after ${shownAfterMs} ms`);
          assert.ok(stalled.type === "kernel-status" && stalled.status.state === "busy" && stalled.status.link?.host.startsWith("far"), JSON.stringify(stalled));
          console.log(`measured: stalled shown ${shownAfterMs} ms after SIGSTOP of the ssh client`);
          if (outcome === "recovers") {
            process.kill(ssh, "SIGCONT");
            // It answers again: the notebook hears the link is fine.
            await waitStatus(client, (status) => status.state === "busy" && status.link === undefined, client.events.indexOf(stalled));
            const recoveredAfterMs = Date.now() - stoppedAt;
            console.log(`measured: link recovered ${recoveredAfterMs} ms after SIGSTOP (SIGCONT once stalled was shown)`);
          } else {
            // Still silent: the lab declares the link failed, closes it and opens a new one; the kernel resumes.
            await waitStatus(client, (status) => status.state === "busy" && status.link?.state === "reconnecting", client.events.indexOf(stalled));
            const failedAfterMs = Date.now() - stoppedAt;
            console.log(`measured: link failed (closed, reconnecting) ${failedAfterMs} ms after SIGSTOP`);
            assert.ok(failedAfterMs <= 45_000, `failed after ${failedAfterMs} ms`);
            await waitStatus(client, (status) => status.state === "busy" && status.link === undefined, client.events.indexOf(stalled));
            console.log(`measured: link reopened ${Date.now() - stoppedAt} ms after SIGSTOP`);
            assert.ok(server.logs.some((line) => line.includes("stopped answering")), "the log says why the link was closed");
          }
        } finally {
          try {
            process.kill(ssh, "SIGCONT");
          } catch {
            // the lab ended it (reopened): nothing to continue
          }
        }
        await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);
        assert.deepEqual(shownText(client.events, cellId).split("\n").filter(Boolean), expected);
        const reopened = await client.send({ op: "open", notebookId });
        assert.ok(reopened.ok && reopened.notebook);
        assert.deepEqual(storedText(reopened.notebook, cellId).split("\n").filter(Boolean), expected);
        await client.send({ op: "shutdown", notebookId });
      } finally {
        client.close();
      }
    });
  }

  it("past the lease, nothing of the lab is left on the host but its bounded log", LIMIT, async () => {
    const { server } = await labWith("lease", [{ id: "brief", leaseMinutes: 0.05 }], { defaultHost: "brief" });
    const client = await connectClient(server.url);
    const { notebookId, cellId } = await notebook(client, "leaves nothing");
    assert.equal((await runToEnd(client, notebookId, cellId, "print('hi')")).text, "hi\n");
    client.close();
    const top = path.join(dir, "remote-brief", `mgpulab-${process.getuid?.() ?? 0}`);
    const [agentDir] = readdirSync(top);
    assert.ok(agentDir, "the agent's folder");
    const folder = path.join(top, agentDir);
    assert.ok(readdirSync(folder).some((name) => name.startsWith("code-")), "while it runs, its code is there");
    await server.stop("SIGKILL");
    await waitUntil(() => !existsSync(path.join(folder, "agent.sock")) && readdirSync(folder).join(",") === "agent.log", 60_000, `only the log stays: ${readdirSync(folder).join(", ")}`);
    assert.ok(statSync(path.join(folder, "agent.log")).size < 1024 * 1024);
  });
});

describe("GPU visibility on a Slurm host", { skip: slurmUnavailable() ?? false }, () => {
  let slurm: TestSlurm;
  let dir: string;
  let server: LabServer;
  before(async () => {
    slurm = await startSlurm();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-slurm-gpus-"));
    const hostsFile = path.join(dir, "hosts.json");
    writeFileSync(
      hostsFile,
      JSON.stringify({ hosts: [{ id: "hpc", kind: "slurm", python: "/usr/bin/python3", runtimeDir: path.join(dir, "remote"), leaseMinutes: 1, slurm: { gpusPerAgent: 1 } }], defaultHost: "hpc" }),
    );
    server = await LabServer.start({ ...slurm.env, MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_DATA_DIR: path.join(dir, "data") });
  });
  after(async () => {
    await server?.stop("SIGTERM");
    await slurm?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a kernel that asked for no GPU sees none, though its agent's job holds one", LIMIT, async () => {
    const client = await connectClient(server.url);
    try {
      const { notebookId, cellId } = await notebook(client, "no GPU on slurm");
      const code = "import os\nprint('job', bool(os.environ.get('SLURM_JOB_ID')), 'visible', repr(os.environ.get('CUDA_VISIBLE_DEVICES')))";
      assert.deepEqual(await runToEnd(client, notebookId, cellId, code), { status: "ok", text: "job True visible ''\n" });
    } finally {
      client.close();
    }
  });
});
