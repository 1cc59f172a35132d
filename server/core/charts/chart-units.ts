/**
 * Byte units per chart: memory is logged in MiB (`memory_mib`), but a
 * tracked tensor can be 0.0026 MiB and a GPU peak 70 000 MiB. A chart picks
 * one unit from its largest value (B, KiB, MiB or GiB, binary steps) and
 * uses it everywhere it shows a number: title, ticks, hover titles and CSV
 * header. Scaling by a power of two is exact in floating point, so the CSV
 * still holds the stored values, only in the unit its header names.
 */
export type ByteUnit = "B" | "KiB" | "MiB" | "GiB";

export interface UnitScale {
  unit: ByteUnit;
  /** Multiply a MiB value by this to get it in `unit`. */
  fromMiB: number;
}

const UNITS: ReadonlyArray<UnitScale> = [
  { unit: "GiB", fromMiB: 1 / 1024 },
  { unit: "MiB", fromMiB: 1 },
  { unit: "KiB", fromMiB: 1024 },
  { unit: "B", fromMiB: 1024 * 1024 },
];

/** The largest unit in which the largest value is at least 1 (bytes for an all-zero chart). */
export function byteUnitForMiB(values: Iterable<number | null>): UnitScale {
  let max = 0;
  for (const v of values) if (v !== null && Number.isFinite(v) && Math.abs(v) > max) max = Math.abs(v);
  if (max === 0) return UNITS[1]!;
  return UNITS.find((u) => max * u.fromMiB >= 1) ?? UNITS[UNITS.length - 1]!;
}

/** "peak_mib" → "peak_kib": a CSV column named with the unit its values are in. */
export function unitColumn(stem: string, unit: ByteUnit): string {
  return `${stem}_${unit.toLowerCase()}`;
}
