/**
 * Category tick labels that never overlap ("DataParallel x2 · 0DataParallel
 * x2 · 1" when two long labels share a narrow plot): from the plot's width
 * and the labels' estimated widths, the labels lie flat when each fits its
 * band, are slanted when even their slanted boxes stay apart, else stand
 * vertical — and when the bands are narrower than a line, only every n-th is
 * labelled. "Apart" is judged on the labels' axis-aligned boxes, the
 * strictest reading, and the axis gets the height its labels need.
 */
/** Average advance of an 11 px sans-serif character, generous (digits and capitals are wider than e, i, l). */
export const CHAR_PX = 6.6;
/** A tick label's line height. */
export const LINE_PX = 13;
/** Space kept between neighbouring labels. */
const GAP_PX = 6;
const SLANT_DEG = 35;

export interface TickLayout {
  angle: 0 | -35 | -90;
  /** Pixels the axis needs below the plot for its labels. */
  height: number;
  /** Labels skipped between two shown (recharts' `interval`): 0 shows every one. */
  interval: number;
}

export function labelWidth(label: string, charPx = CHAR_PX): number {
  return label.length * charPx;
}

export function categoryTickLayout(labels: readonly string[], plotWidth: number, charPx = CHAR_PX): TickLayout {
  const widest = Math.max(0, ...labels.map((l) => labelWidth(l, charPx)));
  const band = plotWidth / Math.max(1, labels.length);
  if (widest + GAP_PX <= band) return { angle: 0, height: 30, interval: 0 };
  const rad = (SLANT_DEG * Math.PI) / 180;
  const slantedWidth = widest * Math.cos(rad) + LINE_PX * Math.sin(rad);
  if (slantedWidth + GAP_PX <= band) return { angle: -35, height: Math.ceil(widest * Math.sin(rad) + LINE_PX * Math.cos(rad) + 12), interval: 0 };
  const interval = Math.max(0, Math.ceil((LINE_PX + GAP_PX) / Math.max(band, 1e-9)) - 1);
  return { angle: -90, height: Math.ceil(widest + 14), interval };
}

/** Pixels a value axis keeps for its rotated title ("samples", "ms"), the tick marks and a margin. */
const VALUE_AXIS_CHROME_PX = 30;
const MIN_VALUE_AXIS_PX = 56;

/**
 * How wide a value (y) axis must be so its widest tick label ("16,000")
 * never runs into the axis title beside it: from the tick labels the axis
 * will show (`ticks`, already formatted), their estimated widths, and room
 * for the title.
 */
export function valueAxisWidth(ticks: readonly string[], charPx = CHAR_PX): number {
  const widest = Math.max(0, ...ticks.map((tick) => labelWidth(tick, charPx)));
  return Math.max(MIN_VALUE_AXIS_PX, Math.ceil(widest + VALUE_AXIS_CHROME_PX));
}
