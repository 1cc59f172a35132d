/**
 * The Slurm transport on a real single-node Slurm (tests/helpers/slurm.ts):
 * a link reaches the bootstrap through `srun --pty` in the agent's own
 * allocation, with the allocation's GPU; a daemon the bootstrap detaches
 * outlives the link's srun client, the next link finds the same allocation,
 * and once the daemon is gone the allocation is released. Also recorded: why
 * the keeper exists (with proctrack/cgroup, a daemon detached from a plain
 * `srun --pty` step dies with the step).
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseHostsConfig, type HostConfig } from "../../server/hosts/host-config";
import { slurmJobName, transportFor } from "../../server/hosts/host-transport";
import { isAlive, pollUntil } from "../helpers/daemons";
import { PtyLink } from "../helpers/pty-link";
import { slurmUnavailable, startSlurm, type TestSlurm } from "../helpers/slurm";

const skip = slurmUnavailable() ?? false;
const PYTHON = "/usr/bin/python3";
const KEEPER_IDLE_SECONDS = 2;

/** A stand-in bootstrap: says where it runs, and on "detach <file>" leaves a daemon behind as the agent's bootstrap does. */
const BOOTSTRAP = [
  "import os, sys, time",
  'sys.stdout.write("LINK-" + "READY pid=%d cuda=%s\\n" % (os.getpid(), os.environ.get("CUDA_VISIBLE_DEVICES", "none")))',
  "line = sys.stdin.readline().strip()",
  'if line.startswith("detach "):',
  "    pidfile = line.split(\" \", 1)[1]",
  "    if os.fork() == 0:",
  "        os.setsid()",
  "        if os.fork() == 0:",
  '            fd = os.open("/dev/null", os.O_RDWR)',
  "            for n in (0, 1, 2):",
  "                os.dup2(fd, n)",
  '            with open(pidfile + ".tmp", "w") as out:',
  "                out.write(str(os.getpid()))",
  '            os.rename(pidfile + ".tmp", pidfile)',
  "            while True:",
  "                time.sleep(60)",
  "        os._exit(0)",
  "    while not os.path.exists(pidfile):",
  "        time.sleep(0.05)",
  'sys.stdout.write("ECHO:" + line[::-1] + "\\n")',
  "sys.stdin.readline()",
].join("\n");

describe("Slurm transport on a real single-node Slurm", { skip }, () => {
  let slurm: TestSlurm;
  let dir: string;
  let host: HostConfig;
  const links: PtyLink[] = [];

  before(async () => {
    slurm = await startSlurm();
    dir = mkdtempSync(path.join(tmpdir(), "mgpulab-slurm-runtime-"));
    const config = parseHostsConfig(
      { hosts: [{ id: "cluster", kind: "slurm", python: PYTHON, runtimeDir: dir, slurm: { gpusPerAgent: 1, sbatchArgs: ["--time=10"] } }] },
      "test hosts.json",
    );
    const found = config.hosts.find((candidate) => candidate.id === "cluster");
    assert.ok(found);
    host = found;
  });
  after(async () => {
    for (const link of links) await link.pty.terminate(1000);
    await slurm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const open = (argv: string[]) => {
    const link = new PtyLink(argv, slurm.env);
    links.push(link);
    return link;
  };
  const jobs = () => slurm.run(["squeue", "--noheader", "--format=%i %j %T"]).stdout.trim().split("\n").filter(Boolean);
  const steps = (job: string) => slurm.run(["squeue", "--noheader", "--steps", `--jobs=${job}`, "--format=%i"]).stdout.trim().split("\n").filter(Boolean);

  it("links through srun --pty into the agent's allocation, which outlives the link with the daemon, and ends after it", async () => {
    const transport = transportFor(host, undefined, { keeperIdleSeconds: KEEPER_IDLE_SECONDS });
    assert.equal(transport.describe(), "Slurm job mgpulab-cluster --gres=gpu:1 (slurm)");

    const first = open(transport.launchArgv(BOOTSTRAP));
    // The allocation's one GPU (of the node's two) is what the bootstrap, and so the agent, sees.
    await first.waitFor(/LINK-READY pid=\d+ cuda=0\r?\n/);
    const [job, ...others] = jobs();
    assert.deepEqual(others, []);
    assert.match(job ?? "", new RegExp(`^\\d+ ${slurmJobName("cluster")} RUNNING$`));
    const jobId = (job ?? "").split(" ")[0] ?? "";

    const pidfile = path.join(dir, "daemon.pid");
    first.write(`detach ${pidfile}\n`);
    await first.waitFor(/ECHO:/);
    const daemon = Number(readFileSync(pidfile, "utf8"));

    // The link drops as a PTY does: SIGHUP to srun's process group, and the link's step ends.
    await first.pty.terminate(2000);
    assert.ok(first.exit, "the link's PTY did not end");
    await pollUntil("the link's step to end", () => !steps(jobId).some((step) => step === `${jobId}.0`), 15_000);
    assert.ok(isAlive(daemon), "the daemon died with the link");

    // The next link finds the same allocation (by its name) and its daemon.
    const second = open(transport.launchArgv(BOOTSTRAP));
    await second.waitFor(/LINK-READY/);
    assert.deepEqual(jobs(), [job]);
    assert.ok(isAlive(daemon));
    await second.pty.terminate(2000);

    // The agent's lease ends (its daemon exits): the keeper lets the allocation go, and its GPU with it.
    process.kill(daemon, "SIGTERM");
    await pollUntil("the agent's allocation to end", () => jobs().length === 0, 20_000, 200);
    assert.equal(existsSync(path.join(dir, `job-${jobId}.sock`)), false, "the keeper left its socket behind");
  });

  it("records why the keeper exists: with proctrack/cgroup, a daemon detached from a plain srun --pty step dies with it", async (t) => {
    if (slurm.proctrack !== "cgroup") {
      t.skip(`this Slurm tracks processes by ${slurm.proctrack} (no usable cgroup hierarchy here), where a detached daemon escapes the step`);
      return;
    }
    const link = open(["srun", "--pty", "--gres=gpu:1", PYTHON, "-u", "-c", BOOTSTRAP]);
    await link.waitFor(/LINK-READY/);
    const pidfile = path.join(dir, "plain.pid");
    link.write(`detach ${pidfile}\n`);
    await link.waitFor(/ECHO:/);
    const daemon = Number(readFileSync(pidfile, "utf8"));
    await link.pty.terminate(2000);
    await pollUntil("the detached daemon to be killed with its step", () => !isAlive(daemon), 15_000);
  });
});
