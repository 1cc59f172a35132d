/**
 * A few SVG writers for the static export chart: every attribute value and
 * text node goes through escapeXml, coordinates are rounded to 0.1 px.
 */
import { labelWidth } from "../chart-axis-layout";
import { escapeXml } from "../chart-svg";

export type Attrs = Record<string, string | number | undefined>;

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif";

export function px(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

export function el(name: string, attrs: Attrs, children: string | readonly string[] = ""): string {
  const attrText = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXml(typeof v === "number" ? px(v) : v!)}"`)
    .join("");
  const body = typeof children === "string" ? children : children.join("");
  return body === "" ? `<${name}${attrText}/>` : `<${name}${attrText}>${body}</${name}>`;
}

export function text(x: number, y: number, content: string, attrs: Attrs = {}): string {
  return el("text", { x, y, ...attrs }, escapeXml(content));
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface StaticLegendEntry {
  label: string;
  color: string;
  dashed?: boolean;
  faded?: boolean;
  /** A line's own dash pattern (null: solid), drawn as a line swatch. */
  dash?: string | null;
}

/** Legend entries flowing left to right, wrapping; returns the markup and the height used. */
export function legend(entries: readonly StaticLegendEntry[], x: number, y: number, width: number): { svg: string; height: number } {
  const ROW = 16;
  const parts: string[] = [];
  let cx = x;
  let cy = y;
  for (const entry of entries) {
    // Generous widths (chart-axis-layout's estimate), so neighbours on a row never overlap.
    const w = 22 + labelWidth(entry.label) + 14;
    if (cx + w > x + width && cx > x) {
      cx = x;
      cy += ROW;
    }
    parts.push(
      entry.dashed || entry.dash !== undefined
        ? el("line", { x1: cx, y1: cy + 6, x2: cx + 16, y2: cy + 6, stroke: entry.color, "stroke-width": 2, "stroke-dasharray": entry.dash === undefined ? "4 2" : (entry.dash ?? undefined) })
        : el("rect", { x: cx, y: cy + 1, width: 16, height: 10, fill: entry.color, "fill-opacity": entry.faded ? 0.55 : undefined }),
      text(cx + 22, cy + 10, entry.label, { fill: "#333333" }),
    );
    cx += w;
  }
  return { svg: el("g", { class: "legend" }, parts), height: entries.length > 0 ? cy - y + ROW : 0 };
}
