/**
 * What a notebook's kernel imports in the background as soon as it starts
 * (the kernel protocol's `preload` request). A guided scenario's first
 * experiment cell otherwise spends nearly all of its time in `import torch`
 * before it can print anything (measured: 1.6–2.0 s of a 1.7–2.1 s cell
 * with three kernels on this 2-core machine, over 10 s on a busy one), so a
 * workshop's kernels, started ahead of the class, import it then.
 */
import { PRELOAD_MODULE_PATTERN } from "../core/protocol/kernel-messages";

/** The toolkit every experiment cell imports; the scenario's own module is added per notebook. */
const SCENARIO_MODULES = ["torch", "mgpulab", "mgpulab_scenarios"] as const;

/**
 * The modules to preload for a notebook whose cells carry these template ids:
 * none for a plain notebook (its kernel stays as light as Python), the
 * toolkit and each scenario's module for a guided one ("dp-basics/split" →
 * `mgpulab_scenarios.dp_basics`).
 */
export function preloadModules(templateIds: ReadonlyArray<string | null>): string[] {
  const scenarios = new Set<string>();
  for (const id of templateIds) {
    const slash = id?.indexOf("/") ?? -1;
    if (id && slash > 0) scenarios.add(`mgpulab_scenarios.${id.slice(0, slash).replace(/-/g, "_")}`);
  }
  if (scenarios.size === 0) return [];
  return [...SCENARIO_MODULES, ...[...scenarios].sort()].filter((name) => PRELOAD_MODULE_PATTERN.test(name));
}
