/**
 * The kernel's Python code as it travels over the PTY at start: the bootstrap
 * (a `python3 -c` argument) and the package sources it unpacks, so a host
 * needs only python3 — nothing installed by hand.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

export const KERNELS_DIR = path.resolve(__dirname, "..", "..", "kernels");
const PACKAGES = ["mgpulab_wire", "mgpulab_kernel", "mgpulab", "mgpulab_scenarios", "mgpulab_agent"];
export const KERNEL_ENTRY = "mgpulab_kernel.kernel";

export interface KernelBundle {
  bootstrap: string;
  modules: Record<string, string>;
}

let cached: KernelBundle | null = null;

export function loadKernelBundle(kernelsDir = KERNELS_DIR): KernelBundle {
  if (cached && kernelsDir === KERNELS_DIR) return cached;
  const modules: Record<string, string> = {};
  for (const name of PACKAGES) {
    const dir = path.join(kernelsDir, name);
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) collectPython(kernelsDir, dir, modules);
  }
  const bundle = { bootstrap: readFileSync(path.join(kernelsDir, "mgpulab_kernel", "bootstrap.py"), "utf8"), modules };
  if (kernelsDir === KERNELS_DIR) cached = bundle;
  return bundle;
}

function collectPython(root: string, dir: string, into: Record<string, string>): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "__pycache__" && entry.name !== "tests") collectPython(root, full, into);
    } else if (entry.name.endsWith(".py")) {
      into[path.relative(root, full).split(path.sep).join("/")] = readFileSync(full, "utf8");
    }
  }
}
