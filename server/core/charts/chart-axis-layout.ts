/**
 * Category tick labels that never overlap ("DataParallel x2 · 0DataParallel
 * x2 · 1" when two long labels share a narrow plot): from the plot's width
 * and the labels' estimated widths, the labels are drawn flat when each
 * fits its band, slanted when slanted neighbours keep a line's height
 * apart, else vertical; the axis gets the height its labels need.
 */
/** Average advance of an 11 px sans-serif character, generous (digits and capitals are wider than e, i, l). */
export const CHAR_PX = 6.6;
/** A tick label's line height, and the space kept between neighbours. */
export const LINE_PX = 13;
const GAP_PX = 6;
const SLANT_DEG = 35;

export interface TickLayout {
  angle: 0 | -35 | -90;
  /** Pixels the axis needs below the plot for its labels. */
  height: number;
}

export function labelWidth(label: string, charPx = CHAR_PX): number {
  return label.length * charPx;
}

export function categoryTickLayout(labels: readonly string[], plotWidth: number, charPx = CHAR_PX): TickLayout {
  const widest = Math.max(0, ...labels.map((l) => labelWidth(l, charPx)));
  const band = plotWidth / Math.max(1, labels.length);
  if (widest + GAP_PX <= band) return { angle: 0, height: 30 };
  const rad = (SLANT_DEG * Math.PI) / 180;
  // Parallel slanted labels one band apart are band × sin(angle) apart across their lines.
  if (band * Math.sin(rad) >= LINE_PX + 2) return { angle: -35, height: Math.ceil(widest * Math.sin(rad) + LINE_PX + 10) };
  return { angle: -90, height: Math.ceil(widest + 14) };
}
