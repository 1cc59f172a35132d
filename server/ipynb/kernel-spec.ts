/**
 * A notebook's kernel spec in a .ipynb file (metadata.mgpulab.kernelSpec:
 * { hostId, gpus }). Another lab's file may name a host this lab lacks, or
 * carry something malformed: the import goes on with the default host (or
 * no GPU) and says so in a note, never refusing the file for it.
 */
import { z } from "zod";
import type { StoredKernelSpec } from "../persistence/types";

const DEFAULT_SPEC: StoredKernelSpec = { hostId: null, gpus: 0 };

const fileSpec = z.object({
  hostId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).nullable().optional(),
  gpus: z.number().int().min(0).max(1024).optional(),
});

/** The file's spec when well formed; otherwise the default, with a note saying what was wrong. */
export function readKernelSpec(value: unknown, where: string, notes: string[]): StoredKernelSpec {
  if (value === undefined) return DEFAULT_SPEC;
  const parsed = fileSpec.safeParse(value);
  if (!parsed.success) {
    notes.push(`${where}: not a kernel spec (${parsed.error.issues[0]?.message ?? "malformed"}); the notebook's kernels start on the lab's default host with no GPU`);
    return DEFAULT_SPEC;
  }
  return { hostId: parsed.data.hostId ?? null, gpus: parsed.data.gpus ?? 0 };
}

/** Keeps the file's host when the lab has one by that id (or when no host list is given); else the default host, noted. */
export function settleKernelSpec(spec: StoredKernelSpec, hostIds: readonly string[] | undefined, notes: string[]): StoredKernelSpec {
  if (spec.hostId === null || hostIds === undefined || hostIds.includes(spec.hostId)) return spec;
  notes.push(`metadata.mgpulab.kernelSpec: host "${spec.hostId}" is not one of this lab's hosts (${hostIds.join(", ")}); the notebook's kernels start on the default host`);
  return { ...spec, hostId: null };
}
