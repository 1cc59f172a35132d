/**
 * How each loss line stays visible when another lies on top of it (two
 * variants that compute the same thing draw the same line): every line gets
 * its own dash pattern and its own hollow marker shape, and its markers sit
 * at positions shifted by its index, so of two identical lines the lower
 * one still shows through the upper one's dash gaps and at its own markers.
 * Compared runs keep one dash ("5 3"), as the compare picker says.
 */
export type MarkerShape = "circle" | "square" | "triangle" | "diamond" | "cross" | "plus" | "down" | "star";

const MARKERS: readonly MarkerShape[] = ["circle", "square", "triangle", "diamond", "cross", "plus", "down", "star"];
/** This run's lines: the first solid, then patterns unlike each other and unlike the compared runs' "5 3". */
const DASHES: ReadonlyArray<string | null> = [null, "9 3", "2 3", "9 3 2 3", "14 4", "4 2 1 2", "1 5", "12 2 2 2 2 2"];
export const COMPARED_DASH = "5 3";
/** Markers per line across the visible window. */
export const MARKERS_PER_LINE = 8;

export interface LineStyle {
  dash: string | null;
  marker: MarkerShape;
}

/** `lineIndex`: the line's position among this chart's lines of its run. */
export function lineStyle(lineIndex: number, compared: boolean, globalIndex = lineIndex): LineStyle {
  return {
    dash: compared ? COMPARED_DASH : DASHES[lineIndex % DASHES.length]!,
    marker: MARKERS[globalIndex % MARKERS.length]!,
  };
}

/**
 * Indices (ascending, distinct, < count) of the drawn points that carry a
 * marker: `perLine` evenly spaced, shifted by lineIndex / lineCount of a
 * spacing so lines that coincide put their markers at different points.
 * With fewer points than markers every point gets one (shapes then differ).
 */
export function markerIndices(count: number, lineIndex: number, lineCount: number, perLine = MARKERS_PER_LINE): number[] {
  if (count <= 0) return [];
  if (count <= perLine) return Array.from({ length: count }, (_, i) => i);
  const spacing = count / perLine;
  const shift = (spacing * (lineIndex % Math.max(1, lineCount))) / Math.max(1, lineCount);
  const out: number[] = [];
  for (let k = 0; k < perLine; k++) {
    const i = Math.floor(k * spacing + shift);
    if (i < count && (out.length === 0 || i > out[out.length - 1]!)) out.push(i);
  }
  return out;
}

/** An SVG path of the marker centred on (x, y), `r` its half size. */
export function markerPath(shape: MarkerShape, x: number, y: number, r = 3.5): string {
  const p = (dx: number, dy: number): string => `${round(x + dx)},${round(y + dy)}`;
  switch (shape) {
    case "circle":
      return `M${p(-r, 0)}A${r},${r} 0 1,0 ${p(r, 0)}A${r},${r} 0 1,0 ${p(-r, 0)}Z`;
    case "square":
      return `M${p(-r, -r)}L${p(r, -r)}L${p(r, r)}L${p(-r, r)}Z`;
    case "triangle":
      return `M${p(0, -r)}L${p(r, r)}L${p(-r, r)}Z`;
    case "down":
      return `M${p(0, r)}L${p(r, -r)}L${p(-r, -r)}Z`;
    case "diamond":
      return `M${p(0, -r)}L${p(r, 0)}L${p(0, r)}L${p(-r, 0)}Z`;
    case "cross":
      return `M${p(-r, -r)}L${p(r, r)}M${p(r, -r)}L${p(-r, r)}`;
    case "plus":
      return `M${p(-r, 0)}L${p(r, 0)}M${p(0, -r)}L${p(0, r)}`;
    case "star":
      return `M${p(-r, 0)}L${p(r, 0)}M${p(-r / 2, -r)}L${p(r / 2, r)}M${p(r / 2, -r)}L${p(-r / 2, r)}`;
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
