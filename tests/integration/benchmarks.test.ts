/**
 * Every benchmark still runs. Each is started as a person starts it, as a
 * child process, with the smallest sizes its options take (or its --smoke),
 * and must exit 0 and print its table. Figures are not checked: performance
 * is measured by the benchmarks, not asserted here. A module that moved, a
 * page the CSP now refuses or a renamed event then fails this suite, not
 * the next person who measures (issue 29 found two benchmarks broken so).
 * Every script in tests/bench must be started here or be a helper of one.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";

const ROOT = path.resolve(__dirname, "..", "..");
const BENCH = path.join(ROOT, "tests", "bench");
/** Where smoke runs write their result files: the recorded figures in tests/bench are a full run's, not these. */
const SCRATCH = mkdtempSync(path.join(tmpdir(), "mgpulab-bench-smoke-"));

interface Benchmark {
  file: string;
  args: string[];
  /** A line of its table (the benchmark got to the end). */
  prints: RegExp;
  limitMs: number;
}

const BENCHMARKS: Benchmark[] = [
  { file: "cell-cpu.ts", args: ["--smoke", "--no-build"], prints: /lab server \/ Jupyter server, CPU per cell/, limitMs: 300_000 },
  { file: "run.ts", args: ["--rounds", "5", "--megabytes", "1", "--results", path.join(SCRATCH, "results.json")], prints: /trivial cell round trip, median of 5/, limitMs: 300_000 },
  { file: "durability.ts", args: ["--rounds", "5", "--megabytes", "1"], prints: /durable before visible/, limitMs: 180_000 },
  { file: "hosts.ts", args: ["--rounds", "5", "--megabytes", "1", "--kernels", "1", "--results", path.join(SCRATCH, "hosts-results.json")], prints: /SSH host/, limitMs: 300_000 },
  { file: "persistence.ts", args: ["--cells", "50", "--points", "2000", "--batch", "500"], prints: /metric insert/, limitMs: 180_000 },
  { file: "postgres-transactions.ts", args: ["--writers", "2", "--commits", "3", "--pools", "1"], prints: /PostgreSQL, pool 1/, limitMs: 240_000 },
  { file: "forms.ts", args: ["--changes", "2"], prints: /\|/, limitMs: 180_000 },
  { file: "ipynb-import-memory.ts", args: ["--mb", "1", "--concurrent", "1", "--settle", "0"], prints: /RSS peak during/, limitMs: 300_000 },
  {
    file: "workshop-load.ts",
    args: ["--participants", "2", "--trivial", "1", "--burst", "1", "--steps", "none", "--think-ms", "0", "--limit-s", "240", "--no-build"],
    prints: /nothing lost/i,
    limitMs: 300_000,
  },
  { file: "cluster-load.ts", args: ["--participants", "2", "--cells", "1", "--servers", "1,2", "--limit-s", "240"], prints: /servers/, limitMs: 300_000 },
  { file: "charts.ts", args: ["--smoke", "--no-build"], prints: /"typing"/, limitMs: 400_000 },
  { file: "timing_overhead.py", args: ["100", "2"], prints: /the timer alone/, limitMs: 180_000 },
  { file: "launch_overhead.py", args: ["2", "1"], prints: /\|/, limitMs: 180_000 },
];

/** Files in tests/bench that are parts of the benchmarks above, not benchmarks of their own. */
const HELPERS: Record<string, string> = {
  "cpu-profile.ts": "cell-cpu.ts's profile summary",
  "jupyter_server_cells.py": "cell-cpu.ts's Jupyter server driver",
  "jupyter_bench.py": "run.ts's Jupyter side",
  // GPU-only (CUDA events and pinned copies): without CUDA it says so and exits 2, so nothing here runs it
  "step_timer_probe.py": "timing_overhead.py --cuda's breakdown of a step's host calls, run by hand on a GPU host",
  "kernel-traffic.ts": "run.ts's and hosts.ts's traffic measure",
  "typing-latency.ts": "charts.ts's typing runs",
};

function runBenchmark(benchmark: Benchmark): Promise<{ code: number | null; output: string }> {
  const script = path.join(BENCH, benchmark.file);
  const [command, args] = benchmark.file.endsWith(".py") ? [chooseInterpreter().executable, [script]] : [process.execPath, ["--import", "tsx", script]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, ...benchmark.args], { cwd: ROOT, env: { ...process.env, NODE_ENV: "production" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

// Two at a time: each is its own processes on free ports and temp dirs, and the suite's time matters (issue 31).
describe("every benchmark runs (smoke sizes)", { concurrency: 2 }, () => {
  after(() => rmSync(SCRATCH, { recursive: true, force: true }));

  it("every file of tests/bench is a benchmark started here or a part of one", () => {
    const started = new Set(BENCHMARKS.map((benchmark) => benchmark.file));
    // Code only: the benchmarks' own result files (results.json, hosts-results.json) are outputs.
    const unknown = readdirSync(BENCH).filter((file) => /\.(ts|py)$/.test(file) && !started.has(file) && HELPERS[file] === undefined);
    assert.deepEqual(unknown, [], "a new benchmark goes into BENCHMARKS (or HELPERS, saying whose part it is)");
  });

  for (const benchmark of BENCHMARKS) {
    it(`${benchmark.file} ${benchmark.args.join(" ")}`, { timeout: benchmark.limitMs + 30_000 }, async () => {
      const { code, output } = await runBenchmark(benchmark);
      assert.equal(code, 0, `${benchmark.file} exited with ${code}:\n${output.slice(-4000)}`);
      assert.match(output, benchmark.prints, `${benchmark.file} did not print its table:\n${output.slice(-4000)}`);
    });
  }
});
