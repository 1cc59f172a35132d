/**
 * Colour-blind-friendly colours: Okabe–Ito for variants and runs, Paul Tol's
 * "bright" set for devices, fixed colours per timing phase. Chosen by
 * position so a variant or device keeps its colour across charts.
 */
const VARIANT_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#B8A000"];
const DEVICE_COLORS = ["#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#777777", "#332288"];

export function variantColor(index: number): string {
  return VARIANT_COLORS[index % VARIANT_COLORS.length]!;
}

export function deviceColor(index: number): string {
  return DEVICE_COLORS[index % DEVICE_COLORS.length]!;
}

/** Compared runs reuse the variant colours, dashed, shifted so the first compared run differs from this run. */
export function runColor(runIndex: number, variantIndex: number): string {
  return variantColor(variantIndex + runIndex * 3);
}
