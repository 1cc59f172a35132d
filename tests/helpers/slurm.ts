/**
 * A single-node Slurm on 127.0.0.1 (Debian's slurmctld, slurmd, slurm-client
 * and munge): a real cluster for the Slurm transport. Everything lives in a
 * temp dir (munge key and socket, slurm.conf, state, spool); this machine is
 * the one node, with its CPUs and two fake GPUs (gres.conf naming character
 * devices made with mknod: slurmd drops file-less GPUs and refuses plain files).
 * ProctrackType is proctrack/cgroup, the usual production setting, where the
 * cgroup hierarchy lets slurmd use it, else proctrack/pgid (`proctrack` says
 * which). slurmd runs as root, so the tests need root.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, hostname, tmpdir } from "node:os";
import path from "node:path";
import { exited, freePort, pollUntil, processesWithEnv, signal, startDaemon, type Daemon } from "./daemons";
import { ensureDebianPackages } from "./debian-packages";

export const FAKE_GPUS = 2;

export interface TestSlurm {
  /** The environment that points Slurm's commands at this cluster (SLURM_CONF). */
  env: Record<string, string>;
  node: string;
  proctrack: "cgroup" | "pgid";
  /** Runs a Slurm command against this cluster. */
  run(argv: string[]): { status: number | null; stdout: string; stderr: string };
  /** Cancels every job, then ends the daemons and every process they started. */
  stop(): Promise<void>;
}

/** null when a Slurm can run here; else why not (the test file skips with it). */
export function slurmUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "a test Slurm needs root (slurmd starts job steps as their user)";
  return ensureDebianPackages(["slurmctld", "slurmd", "slurm-client", "munge"]);
}

function writeConfig(dir: string, node: string, ports: [number, number], proctrack: string): string {
  const conf = path.join(dir, "slurm.conf");
  writeFileSync(
    conf,
    [
      "ClusterName=mgpulab-test",
      `SlurmctldHost=${node}(127.0.0.1)`,
      `SlurmctldPort=${ports[0]}`,
      `SlurmdPort=${ports[1]}`,
      "AuthType=auth/munge",
      "CredType=cred/munge",
      `AuthInfo=socket=${path.join(dir, "munge.sock")}`,
      "SlurmUser=root",
      "SlurmdUser=root",
      `StateSaveLocation=${path.join(dir, "state")}`,
      `SlurmdSpoolDir=${path.join(dir, "spool")}`,
      `SlurmctldPidFile=${path.join(dir, "slurmctld.pid")}`,
      `SlurmdPidFile=${path.join(dir, "slurmd.pid")}`,
      `ProctrackType=proctrack/${proctrack}`,
      "TaskPlugin=task/none",
      "SchedulerType=sched/backfill",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_Core",
      "GresTypes=gpu",
      "ReturnToService=2",
      "MpiDefault=none",
      "JobCompType=jobcomp/none",
      "AccountingStorageType=accounting_storage/none",
      "JobAcctGatherType=jobacct_gather/none",
      // Jobs end at once when cancelled: the tests wait on them.
      "KillWait=2",
      `NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus().length} Gres=gpu:${FAKE_GPUS} State=UNKNOWN`,
      "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
      "",
    ].join("\n"),
  );
  writeFileSync(path.join(dir, "cgroup.conf"), "CgroupPlugin=autodetect\nConstrainDevices=no\n");
  writeFileSync(path.join(dir, "gres.conf"), `NodeName=${node} Name=gpu File=${path.join(dir, "gpu")}[0-${FAKE_GPUS - 1}]\n`);
  return conf;
}

/** slurmd leaves its (by now empty) `slurm_<node>` cgroups behind; rmdir removes only empty ones. */
function removeEmptyCgroups(node: string): void {
  const root = "/sys/fs/cgroup";
  if (!existsSync(root)) return;
  const remove = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) remove(path.join(dir, entry.name));
    try {
      rmdirSync(dir);
    } catch {
      // still in use: not ours to force
    }
  };
  for (const controller of readdirSync(root)) {
    const dir = path.join(root, controller, `slurm_${node}`);
    if (existsSync(dir)) remove(dir);
  }
}

export async function startSlurm(): Promise<TestSlurm> {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-slurm-"));
  // munged refuses a socket in a directory others cannot traverse.
  chmodSync(dir, 0o755);
  for (const sub of ["state", "spool"]) mkdirSync(path.join(dir, sub));
  for (let index = 0; index < FAKE_GPUS; index++) {
    // The /dev/null device under another name: a character device slurmd accepts as a GPU's file.
    const made = spawnSync("mknod", [path.join(dir, `gpu${index}`), "c", "1", "3"], { encoding: "utf8" });
    if (made.status !== 0) throw new Error(`mknod failed: ${made.stderr}`);
  }
  const key = path.join(dir, "munge.key");
  const keygen = spawnSync("mungekey", ["--create", `--keyfile=${key}`], { encoding: "utf8" });
  if (keygen.status !== 0) throw new Error(`mungekey failed: ${keygen.stderr}`);
  const node = hostname().split(".")[0] ?? "localhost";
  const ports: [number, number] = [await freePort(), await freePort()];
  // Every process of this cluster carries this variable: cleanup finds re-parented steps and daemons by it.
  const marker = `MGPULAB_TEST_SLURM=${dir}`;
  const started: Daemon[] = [];
  const env = { ...process.env, MGPULAB_TEST_SLURM: dir, SLURM_CONF: path.join(dir, "slurm.conf") };
  const run = (argv: string[]) => {
    const [file, ...args] = argv;
    const result = spawnSync(file ?? "false", args, { encoding: "utf8", env, timeout: 30_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const stop = async () => {
    run(["scancel", "--full", "--quiet", "--user=root"]);
    await pollUntil("the test Slurm's jobs to end", () => run(["squeue", "--noheader"]).stdout.trim() === "", 15_000).catch(() => undefined);
    for (const daemon of started.reverse()) {
      signal([daemon.child.pid ?? 0], "SIGTERM");
      await exited(daemon.child);
    }
    signal(processesWithEnv(marker), "SIGKILL");
    removeEmptyCgroups(node);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    started.push(
      await startDaemon(
        ["munged", "--foreground", "--force", `--socket=${path.join(dir, "munge.sock")}`, `--key-file=${key}`, `--pid-file=${path.join(dir, "munged.pid")}`, `--seed-file=${path.join(dir, "munged.seed")}`, `--log-file=${path.join(dir, "munged.log")}`],
        /Created \d+ work threads/,
        { env },
      ),
    );
    let proctrack: "cgroup" | "pgid" = "cgroup";
    for (const attempt of ["cgroup", "pgid"] as const) {
      proctrack = attempt;
      const conf = writeConfig(dir, node, ports, attempt);
      const ctld = await startDaemon(["slurmctld", "-D", "-i", "-f", conf], /Running as primary controller/, { env });
      started.push(ctld);
      try {
        started.push(await startDaemon(["slurmd", "-D", "-N", node, "-f", conf], /slurmd started on/, { env }));
        break;
      } catch (error) {
        // No usable cgroup hierarchy (a container): the same cluster with process-group tracking.
        if (attempt === "pgid") throw error;
        started.pop();
        signal([ctld.child.pid ?? 0], "SIGTERM");
        await exited(ctld.child);
      }
    }
    // The node registers right after slurmd starts; it has no event of its own to wait on.
    await pollUntil(`node ${node} to be idle`, () => /^idle$/.test(run(["sinfo", "--noheader", "--responding", "--format=%T", `--nodes=${node}`]).stdout.trim()), 30_000, 200);
    return { env: { SLURM_CONF: env.SLURM_CONF, MGPULAB_TEST_SLURM: dir }, node, proctrack, run, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
