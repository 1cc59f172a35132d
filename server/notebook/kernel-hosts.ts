/**
 * Where a notebook's kernel may run, as the notebook runtimes need it: a
 * launcher per host id, the default host, and what a kernel spec is checked
 * against. The lab's hosts (hosts/lab-hosts.ts) are one; tests of the kernel
 * path use one launcher as the only host.
 */
import type { KernelSpec } from "../core/protocol/notebook-model";
import type { KernelLauncher } from "../kernel/kernel-process";
import { CommandError } from "../errors";

export interface KernelHosts {
  readonly defaultHost: string;
  launcher(hostId: string): KernelLauncher | undefined;
  ids(): string[];
  /** The GPUs the host offers when known (declared, or reported by its agent); null while unknown. */
  gpuCount(hostId: string): number | null;
}

/** At most this many GPUs in a kernel spec (the agent protocol's own bound). */
export const MAX_SPEC_GPUS = 1024;

/** One launcher as the only host (kernels on their own local PTYs: tests, the bench). */
export function singleHost(launcher: KernelLauncher): KernelHosts {
  return {
    defaultHost: launcher.id,
    launcher: (hostId) => (hostId === launcher.id ? launcher : undefined),
    ids: () => [launcher.id],
    gpuCount: () => null,
  };
}

/** A spec a notebook may take: the host exists, and the GPUs are 0..1024 and no more than the host has (when known). */
export function checkKernelSpec(hosts: KernelHosts, spec: KernelSpec): KernelSpec {
  if (!hosts.launcher(spec.hostId)) throw new CommandError("not-found", `no host "${spec.hostId}" in this lab (its hosts: ${hosts.ids().join(", ")})`);
  if (!Number.isInteger(spec.gpus) || spec.gpus < 0 || spec.gpus > MAX_SPEC_GPUS) {
    throw new CommandError("invalid", `a kernel asks for 0 to ${MAX_SPEC_GPUS} GPUs, not ${spec.gpus}`);
  }
  const offered = hosts.gpuCount(spec.hostId);
  if (offered !== null && spec.gpus > offered) {
    throw new CommandError("invalid", `host "${spec.hostId}" has ${offered === 0 ? "no GPU" : offered === 1 ? "1 GPU" : `${offered} GPUs`}: a kernel there cannot ask for ${spec.gpus}`);
  }
  return spec;
}
