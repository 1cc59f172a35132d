/**
 * Benchmark: kernels through host agents, local and over SSH (a real sshd on
 * 127.0.0.1, as the tests start it), in the same run: round trip of a trivial
 * cell and output throughput; the agent's memory and each kernel's; and the
 * time a restarted lab server takes to take over a running kernel. Prints
 * Markdown. Not a test: nothing here asserts.
 *
 * Its figures go to tests/bench/hosts-results.json, or to `--results file`
 * (the suite's smoke run writes elsewhere, so the recorded figures stay).
 *
 *   npx tsx tests/bench/hosts.ts [--rounds 300 --megabytes 20 --kernels 4 --results file]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import path from "node:path";
import { LabHosts, localHostSpec, labHostSpecs } from "../../server/hosts/lab-hosts";
import { parseHostsConfig } from "../../server/hosts/host-config";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import type { KernelLauncher } from "../../server/kernel/kernel-process";
import { LabServer } from "../helpers/lab-server";
import { connectClient } from "../helpers/socket-harness";
import { startSshd } from "../helpers/sshd";
import { TestKernel } from "../helpers/test-kernel";
import { measureTraffic } from "./kernel-traffic";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

function textOption(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
}

/** Resident memory of a process (VmRSS), in MiB. */
function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function cellFigures(host: KernelLauncher, rounds: number, megabytes: number): Promise<{ median: number; p99: number; mbps: number; warmMbps: number; newKernelMbps: number }> {
  const traffic = await measureTraffic(() => ({ host, gpus: 0 }), rounds, megabytes);
  return { median: percentile(traffic.latencies, 0.5), p99: percentile(traffic.latencies, 0.99), mbps: traffic.throughputMBps, warmMbps: traffic.warmThroughputMBps, newKernelMbps: traffic.newKernelThroughputMBps };
}

/** The agent's RSS alone, then with `count` idle kernels (and theirs). */
async function memoryFigures(hosts: LabHosts, count: number): Promise<{ agentMiB: number; agentWithKernelsMiB: number; kernelMiB: number; kernelWithTorchMiB: number }> {
  const agent = hosts.agent("local")!;
  const hello = await agent.connect();
  const agentMiB = rssMiB(hello.pid);
  const kernels: TestKernel[] = [];
  for (let i = 0; i < count; i++) kernels.push(await TestKernel.start({ launch: () => ({ host: hosts.launcher()!, gpus: 0 }) }));
  const agentWithKernelsMiB = rssMiB(hello.pid);
  const kernelMiB = kernels.map((kernel) => rssMiB(kernel.session.pid!)).reduce((a, b) => a + b, 0) / count;
  await kernels[0]!.run("import torch");
  const kernelWithTorchMiB = rssMiB(kernels[0]!.session.pid!);
  for (const kernel of kernels) await kernel.close();
  return { agentMiB, agentWithKernelsMiB, kernelMiB, kernelWithTorchMiB };
}

/** A lab server is stopped while a cell prints, a new one started: how long until it has taken the kernel over, and until its viewer sees the next line. */
async function takeoverFigures(repeats: number): Promise<{ takeoverMs: number[]; startToTakenOverMs: number[]; nextLineMs: number[] }> {
  const takeoverMs: number[] = [];
  const startToTakenOverMs: number[] = [];
  const nextLineMs: number[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-takeover-"));
  try {
    for (let i = 0; i < repeats; i++) {
      const first = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
      const client = await connectClient(first.url);
      const created = await client.sendLab({ op: "create-notebook", title: `takeover ${i}` });
      if (!created.ok || !created.notebook) throw new Error("could not create a notebook");
      const notebookId = created.notebook.id;
      const opened = await client.send({ op: "open", notebookId });
      if (!opened.ok || !opened.notebook) throw new Error("could not open it");
      const cellId = opened.notebook.cells[0]!.id;
      await client.run(notebookId, { [cellId]: "import time\nfor i in range(100000):\n    print(f'tick {i}', flush=True)\n    time.sleep(0.02)" });
      await client.waitFor((event) => event.type === "cell-stream");
      client.close();
      await first.stop("SIGTERM");
      const began = performance.now();
      const second = await LabServer.start({ MGPULAB_DATA_DIR: dataDir });
      const line = second.logs.find((entry) => entry.includes("took over the kernel"));
      const took = line ? /in (\d+) ms/.exec(line) : null;
      if (took) takeoverMs.push(Number(took[1]));
      startToTakenOverMs.push(performance.now() - began);
      const viewer = await connectClient(second.url);
      await viewer.send({ op: "open", notebookId });
      await viewer.waitFor((event) => event.type === "cell-stream" && event.cellId === cellId);
      nextLineMs.push(performance.now() - began);
      await viewer.send({ op: "interrupt", notebookId });
      viewer.close();
      await second.stop("SIGTERM");
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { takeoverMs, startToTakenOverMs, nextLineMs };
}

async function main(): Promise<void> {
  const rounds = option("rounds", 300);
  const megabytes = option("megabytes", 20);
  const count = option("kernels", 4);
  const python = chooseInterpreter().executable;
  const sshd = await startSshd();
  const runtimeDir = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-hosts-"));
  const config = parseHostsConfig(
    {
      hosts: [
        {
          id: "loop",
          kind: "ssh",
          python,
          runtimeDir: path.join(runtimeDir, "ssh"),
          ssh: { host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile: sshd.identityFile, options: sshd.sshOptions() },
        },
      ],
    },
    "bench hosts",
  );
  const [, ssh] = labHostSpecs(config.hosts, { python, runtimeDir: path.join(runtimeDir, "local"), leaseSeconds: 60 });
  const hosts = new LabHosts([localHostSpec(python, { leaseSeconds: 60, runtimeDir: path.join(runtimeDir, "local") }), ssh!], "local", `bench${process.pid}`, () => undefined);
  try {
    const local = await cellFigures(hosts.launcher("local")!, rounds, megabytes);
    const overSsh = await cellFigures(hosts.launcher("loop")!, rounds, megabytes);
    const memory = await memoryFigures(hosts, count);
    await hosts.shutdownAll();
    await sshd.stop();
    const takeover = await takeoverFigures(3);
    const median = (values: number[]): number => percentile(values, 0.5);
    const lines = [
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${python}`,
      "",
      "| measurement | local host (agent) | SSH host on 127.0.0.1 (agent) | SSH vs local |",
      "| --- | ---: | ---: | --- |",
      `| trivial cell round trip, median of ${rounds} | ${local.median.toFixed(2)} ms | ${overSsh.median.toFixed(2)} ms | ${(overSsh.median / local.median).toFixed(1)}× |`,
      `| trivial cell round trip, p99 of ${rounds} | ${local.p99.toFixed(2)} ms | ${overSsh.p99.toFixed(2)} ms | ${(overSsh.p99 / local.p99).toFixed(1)}× |`,
      `| output throughput, ${megabytes} MB printed | ${local.mbps.toFixed(1)} MB/s | ${overSsh.mbps.toFixed(1)} MB/s | ${(overSsh.mbps / local.mbps).toFixed(2)}× |`,
      `| output throughput, the same again (warm) | ${local.warmMbps.toFixed(1)} MB/s | ${overSsh.warmMbps.toFixed(1)} MB/s | ${(overSsh.warmMbps / local.warmMbps).toFixed(2)}× |`,
      `| output throughput, a new kernel's first flood after those | ${local.newKernelMbps.toFixed(1)} MB/s | ${overSsh.newKernelMbps.toFixed(1)} MB/s | ${(overSsh.newKernelMbps / local.newKernelMbps).toFixed(2)}× |`,
      "",
      "| memory (RSS) | MiB |",
      "| --- | ---: |",
      `| host agent, no kernel | ${memory.agentMiB.toFixed(1)} |`,
      `| host agent with ${count} kernels | ${memory.agentWithKernelsMiB.toFixed(1)} (+${((memory.agentWithKernelsMiB - memory.agentMiB) / count).toFixed(2)} per kernel) |`,
      `| an idle kernel | ${memory.kernelMiB.toFixed(1)} |`,
      `| a kernel after \`import torch\` | ${memory.kernelWithTorchMiB.toFixed(1)} |`,
      "",
      "| re-attach after a server restart (SIGTERM, then a new server), median of 3 | ms |",
      "| --- | ---: |",
      `| taking the kernel over (link, agent hello, replay from the stored position) | ${median(takeover.takeoverMs).toFixed(0)} |`,
      `| new server process start → kernel taken over (includes Node start, migrations, Next) | ${median(takeover.startToTakenOverMs).toFixed(0)} |`,
      `| new server process start → its viewer sees the cell's next line | ${median(takeover.nextLineMs).toFixed(0)} |`,
    ];
    console.log(lines.join("\n"));
    writeFileSync(textOption("results", path.join(__dirname, "hosts-results.json")), JSON.stringify({ when: new Date().toISOString(), rounds, megabytes, local, overSsh, memory, takeover }, null, 2));
  } finally {
    await hosts.shutdownAll().catch(() => undefined);
    await sshd.stop().catch(() => undefined);
    rmSync(runtimeDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
