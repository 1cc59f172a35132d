/**
 * How many kernels this lab server runs at once, sized from the machine it
 * starts on unless MGPULAB_MAX_KERNELS says otherwise. A fixed default (16
 * before) turned a class of 30 into 16 with kernels and 14 without; the
 * machine's memory and cores say how many it can hold.
 *
 * What a kernel costs, measured (BENCHMARKS.md, "Workshops"): 11 MiB PSS
 * idle, about 120 MiB PSS once torch is imported, 142 MiB with the
 * scenario toolkit too — which a guided scenario's kernel imports as it
 * starts (notebook/kernel-preload.ts; 60 such kernels: 8.5 GiB PSS). The lab
 * server, its scenario catalog and the host agent take about 1 GiB at a
 * workshop's peak; the rest of the memory available at start is the kernels'.
 * Cores bound it too: past a few dozen kernels per core, a class running its
 * steps together waits more on the CPU than it learns.
 */
import { availableParallelism, freemem, totalmem } from "node:os";
import { readFileSync } from "node:fs";

/** PSS of an idle guided-scenario kernel, torch and the toolkit preloaded (BENCHMARKS.md: 142 MiB, 60 kernels). */
export const KERNEL_BYTES = 145 * 2 ** 20;
/** The lab server at a workshop's peak, its scenario catalog and its host agent (BENCHMARKS.md: ~0.8 + 0.25 + 0.03 GiB). */
export const RESERVED_BYTES = 1.5 * 2 ** 30;
/** Kernels per core at most: 60 idle-then-busy kernels on this 2-core machine still answered (BENCHMARKS.md). */
export const KERNELS_PER_CORE = 32;
export const MIN_KERNELS = 4;
export const MAX_KERNELS = 1000;

export interface MachineFacts {
  totalBytes: number;
  /** Memory available to new processes when measured (Linux MemAvailable; free memory elsewhere). */
  availableBytes: number;
  cores: number;
}

export interface KernelCapacity {
  /** At most this many kernels at once. */
  max: number;
  /** Set by MGPULAB_MAX_KERNELS (true) or sized from the machine (false). */
  fromSetting: boolean;
  machine: MachineFacts;
  /** One line for the log and the facilitator: where the number comes from. */
  why: string;
}

/** This machine, now. */
export function measureMachine(): MachineFacts {
  return { totalBytes: totalmem(), availableBytes: memAvailable() ?? freemem(), cores: availableParallelism() };
}

function memAvailable(): number | null {
  try {
    const match = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null; // not Linux: free memory is the estimate
  }
}

/** Kernels the memory holds (each with torch), after the lab's own share. */
export function kernelsByMemory(machine: MachineFacts): number {
  return Math.max(0, Math.floor((machine.availableBytes - RESERVED_BYTES) / KERNEL_BYTES));
}

export function kernelsByCores(machine: MachineFacts): number {
  return machine.cores * KERNELS_PER_CORE;
}

/** The cap: the setting when there is one, else the smaller of what the memory and the cores hold. */
export function kernelCapacity(machine: MachineFacts, setting: number | undefined): KernelCapacity {
  const memory = kernelsByMemory(machine);
  const cores = kernelsByCores(machine);
  const facts = `${gib(machine.availableBytes)} GiB of memory available at start, ${machine.cores} core${machine.cores === 1 ? "" : "s"}`;
  if (setting !== undefined) {
    return { max: setting, fromSetting: true, machine, why: `${setting} kernels at once, set by MGPULAB_MAX_KERNELS (this machine: ${facts}; it holds about ${Math.min(memory, cores)})` };
  }
  const max = Math.min(MAX_KERNELS, Math.max(MIN_KERNELS, Math.min(memory, cores)));
  const limit = memory <= cores ? `memory: ${memory} kernels of ~${KERNEL_BYTES / 2 ** 20} MiB with torch after ${gib(RESERVED_BYTES)} GiB for the lab` : `cores: ${KERNELS_PER_CORE} kernels per core`;
  return { max, fromSetting: false, machine, why: `${max} kernels at once, sized from this machine (${facts}; limited by ${limit}); MGPULAB_MAX_KERNELS overrides it` };
}

export function gib(bytes: number): string {
  return (bytes / 2 ** 30).toFixed(1);
}
