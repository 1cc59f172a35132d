/**
 * Which python3 a local kernel runs. Configured with MGPULAB_PYTHON; otherwise
 * the first candidate that can import torch (found by spec, without the
 * second-long import), else the first that exists — and we say which and why.
 */
import { spawnSync } from "node:child_process";

export interface InterpreterChoice {
  executable: string;
  hasTorch: boolean;
  reason: string;
}

const CANDIDATES = ["python3", "/usr/bin/python3", "/usr/local/bin/python3", "python"];
const PROBE = "import importlib.util,sys; sys.stdout.write(sys.executable + '|' + ('1' if importlib.util.find_spec('torch') else '0'))";

let cached: InterpreterChoice | null = null;

function probe(candidate: string): { executable: string; hasTorch: boolean } | null {
  const result = spawnSync(candidate, ["-c", PROBE], { encoding: "utf8", timeout: 10_000 });
  if (result.status !== 0 || !result.stdout) return null;
  const [executable, torchFlag] = result.stdout.split("|");
  return executable ? { executable, hasTorch: torchFlag === "1" } : null;
}

export function chooseInterpreter(configured = process.env.MGPULAB_PYTHON): InterpreterChoice {
  if (configured) {
    const found = probe(configured);
    if (!found) throw new Error(`MGPULAB_PYTHON=${configured} does not run python`);
    return { ...found, reason: `MGPULAB_PYTHON is set to ${configured}` };
  }
  if (cached) return cached;
  const found = CANDIDATES.map(probe).filter((choice) => choice !== null);
  const withTorch = found.find((choice) => choice.hasTorch);
  if (withTorch) {
    cached = { ...withTorch, reason: "the first python3 on this machine that can import torch" };
  } else if (found[0]) {
    cached = { ...found[0], reason: "no python3 here can import torch; kernels run without it (install python3-torch)" };
  } else {
    throw new Error("no python3 found: install python3 (and python3-torch) or set MGPULAB_PYTHON");
  }
  return cached;
}
