/**
 * Benchmark: this lab's kernel path against Jupyter (ipykernel + jupyter_client)
 * on the same machine in the same run. Prints a Markdown table and writes
 * the figures to tests/bench/results.json (or `--results file`: the suite's
 * smoke run writes elsewhere, so the recorded figures stay). Not a test:
 * nothing here asserts.
 *
 *   npm run bench [-- --rounds 500 --megabytes 50 --results file]
 */
import { spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { LabHosts, localHostSpec } from "../../server/hosts/lab-hosts";
import { localHost } from "../../server/kernel/kernel-host";
import type { KernelLaunch } from "../../server/kernel/kernel-session";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { TestKernel } from "../helpers/test-kernel";
import { measureTraffic } from "./kernel-traffic";

interface Figures {
  startMs: number;
  roundTripMedianMs: number;
  roundTripP99Ms: number;
  throughputMBps: number;
  warmThroughputMBps: number;
  newKernelThroughputMBps: number;
  bytesReceived: number;
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function textOption(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** `launch`: the lab's real path (a kernel of the host agent) or a kernel on the server's own PTY. */
async function measureLab(rounds: number, megabytes: number, launch: () => KernelLaunch): Promise<Figures> {
  localHost(); // resolve the interpreter before timing starts, as the server does at boot
  const starts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const begin = performance.now();
    const kernel = await TestKernel.start({ launch });
    const first = await kernel.run("1");
    if (first.result !== "1") throw new Error("lab kernel gave a wrong first result");
    starts.push(performance.now() - begin);
    await kernel.close();
  }

  const { latencies, throughputMBps, warmThroughputMBps, newKernelThroughputMBps, bytesReceived } = await measureTraffic(launch, rounds, megabytes);
  return {
    startMs: median(starts),
    roundTripMedianMs: median(latencies),
    roundTripP99Ms: latencies[Math.ceil(latencies.length * 0.99) - 1]!,
    throughputMBps,
    warmThroughputMBps,
    newKernelThroughputMBps,
    bytesReceived,
  };
}

function measureJupyter(rounds: number, megabytes: number): Figures {
  const python = chooseInterpreter().executable;
  const run = spawnSync(python, [path.join(__dirname, "jupyter_bench.py"), String(rounds), String(megabytes)], { encoding: "utf8", maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`Jupyter benchmark failed (is python3-ipykernel installed?):\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").pop()!) as Figures;
}

async function main(): Promise<void> {
  const rounds = option("rounds", 500);
  const megabytes = option("megabytes", 50);
  // The lab's kernels belong to the local host agent; the agent is started (its first link) before timing, as the server does on first use.
  const runtimeDir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-agent-"));
  const hosts = new LabHosts([localHostSpec(chooseInterpreter().executable, { leaseSeconds: 60, runtimeDir })], "local", `bench${process.pid}`, () => undefined);
  const agentBegin = performance.now();
  await hosts.agent("local")!.connect();
  const agentStartMs = performance.now() - agentBegin;
  const viaAgent = hosts.launcher()!;
  const direct = localHost();
  const lab = await measureLab(rounds, megabytes, () => ({ host: viaAgent, gpus: 0 }));
  const pty = await measureLab(rounds, megabytes, () => ({ host: direct, gpus: 0 }));
  await hosts.shutdownAll();
  rmSync(runtimeDir, { recursive: true, force: true });
  const jupyter = measureJupyter(rounds, megabytes);
  const rows: Array<[string, keyof Figures, "lower" | "higher", string]> = [
    ["kernel start to first result", "startMs", "lower", "ms"],
    [`trivial cell round trip, median of ${rounds}`, "roundTripMedianMs", "lower", "ms"],
    [`trivial cell round trip, p99 of ${rounds}`, "roundTripP99Ms", "lower", "ms"],
    [`output throughput, ${megabytes} MB printed`, "throughputMBps", "higher", "MB/s"],
    [`output throughput, the same again (warm)`, "warmThroughputMBps", "higher", "MB/s"],
    [`output throughput, a new kernel's first flood after those`, "newKernelThroughputMBps", "higher", "MB/s"],
  ];
  const versus = (ours: Figures, theirs: Figures, key: keyof Figures, better: "lower" | "higher"): string => {
    const ratio = better === "lower" ? theirs[key] / ours[key] : ours[key] / theirs[key];
    return `${ratio.toFixed(1)}× ${ratio >= 1 ? "faster" : "slower"}`;
  };
  const lines = [
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${chooseInterpreter().executable}`,
    `host agent: first link (agent daemon started) ${agentStartMs.toFixed(0)} ms`,
    "",
    "| measurement | Multi-GPU Lab (host agent) | lab kernel on its own PTY | Jupyter | lab (agent) vs Jupyter |",
    "| --- | ---: | ---: | ---: | --- |",
    ...rows.map(([label, key, better, unit]) => `| ${label} | ${lab[key].toFixed(2)} ${unit} | ${pty[key].toFixed(2)} ${unit} | ${jupyter[key].toFixed(2)} ${unit} | ${versus(lab, jupyter, key, better)} |`),
  ];
  console.log(lines.join("\n"));
  writeFileSync(textOption("results", path.join(__dirname, "results.json")), JSON.stringify({ when: new Date().toISOString(), rounds, megabytes, agentStartMs, lab, pty, jupyter }, null, 2));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
