/**
 * The Slurm keeper and connector (kernels/mgpulab_slurm) as `python3 -c` code:
 * each is sent whole on the command line, so a cluster needs nothing installed.
 * `common.py` is inlined in place of its import (each script runs alone), and
 * the result travels as base64 behind a one-line `exec` stub: base64 has no
 * quote, space or `$`, so the stub passes unchanged through sh, sbatch --wrap
 * and ssh's remote command line.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { KERNELS_DIR } from "../kernel/kernel-bundle";

const IMPORT_COMMON = "from mgpulab_slurm.common import socket_path\n";

export interface SlurmScripts {
  keeper: string;
  connector: string;
}

function inline(dir: string, name: string): string {
  const source = readFileSync(path.join(dir, name), "utf8");
  if (!source.includes(IMPORT_COMMON)) throw new Error(`${name} no longer imports socket_path from mgpulab_slurm.common: update slurm-scripts.ts`);
  const common = readFileSync(path.join(dir, "common.py"), "utf8");
  return source.replace(IMPORT_COMMON, `${common}\n`);
}

/** `python3 -c` code that runs `source` with `sys.argv[1:]` as its arguments. */
export function execStub(source: string): string {
  return `import base64;exec(compile(base64.b64decode("${Buffer.from(source, "utf8").toString("base64")}"),"mgpulab","exec"))`;
}

let cached: SlurmScripts | null = null;

export function slurmScripts(kernelsDir = KERNELS_DIR): SlurmScripts {
  if (cached && kernelsDir === KERNELS_DIR) return cached;
  const dir = path.join(kernelsDir, "mgpulab_slurm");
  const scripts = { keeper: execStub(inline(dir, "keeper.py")), connector: execStub(inline(dir, "connector.py")) };
  if (kernelsDir === KERNELS_DIR) cached = scripts;
  return scripts;
}
