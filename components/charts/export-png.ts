/**
 * PNG of a chart: its recharts SVG cloned under a title and above a legend
 * drawn in SVG (the on-screen legend is HTML), with the page's font size and
 * a local font stack set on the root since page CSS does not travel with the
 * image; colours given as the page's tokens (`var(--chart-grid)`) are
 * written out as their current values for the same reason. Rasterised
 * through an <img> on a 2× canvas. Nothing is fetched.
 *
 * The image's own frame (white ground, dark title and legend text) is fixed:
 * an exported chart is a document, light whatever the page's theme.
 */
import { downloadBlob } from "./download";

export interface ImageLegendEntry {
  label: string;
  color: string;
}

const SVG_NS = "http://www.w3.org/2000/svg";
const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif";
const TITLE_H = 24;
const LEGEND_ROW_H = 18;

export async function exportChartPng(chart: SVGSVGElement, title: string, legend: readonly ImageLegendEntry[], fileName: string): Promise<void> {
  const { width, height } = chart.getBoundingClientRect();
  const fontSize = parseFloat(getComputedStyle(chart).fontSize) || 11;
  const legendH = legend.length * LEGEND_ROW_H + (legend.length > 0 ? 8 : 0);
  const total = TITLE_H + height + legendH;

  const root = document.createElementNS(SVG_NS, "svg");
  root.setAttribute("xmlns", SVG_NS);
  root.setAttribute("width", String(width));
  root.setAttribute("height", String(total));
  root.setAttribute("font-family", FONT);
  root.setAttribute("font-size", String(fontSize));
  root.appendChild(rect(0, 0, width, total, "#ffffff"));
  root.appendChild(text(8, 16, title, "bold", "#222222"));

  const body = chart.cloneNode(true) as SVGSVGElement;
  body.setAttribute("x", "0");
  body.setAttribute("y", String(TITLE_H));
  body.setAttribute("width", String(width));
  body.setAttribute("height", String(height));
  root.appendChild(body);

  legend.forEach((entry, i) => {
    const y = TITLE_H + height + 8 + i * LEGEND_ROW_H;
    root.appendChild(rect(8, y + 2, 12, 10, entry.color));
    root.appendChild(text(26, y + 11, entry.label, "normal", "#333333"));
  });
  inlineTokens(root, getComputedStyle(chart));

  const xml = new XMLSerializer().serializeToString(root);
  const url = URL.createObjectURL(new Blob([xml], { type: "image/svg+xml;charset=utf-8" }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const scale = 2;
    const canvas = document.createElement("canvas");
    canvas.width = Math.ceil(width * scale);
    canvas.height = Math.ceil(total * scale);
    const context = canvas.getContext("2d");
    if (!context) throw new Error("this browser gave no 2D canvas context");
    context.scale(scale, scale);
    context.drawImage(image, 0, 0);
    const png = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/png"));
    if (!png) throw new Error("the canvas could not be encoded as PNG");
    downloadBlob(png, fileName);
  } finally {
    URL.revokeObjectURL(url);
  }
}

function rect(x: number, y: number, width: number, height: number, fill: string): SVGRectElement {
  const r = document.createElementNS(SVG_NS, "rect");
  r.setAttribute("x", String(x));
  r.setAttribute("y", String(y));
  r.setAttribute("width", String(width));
  r.setAttribute("height", String(height));
  r.setAttribute("fill", fill);
  return r;
}

function text(x: number, y: number, content: string, weight: string, fill: string): SVGTextElement {
  const t = document.createElementNS(SVG_NS, "text");
  t.setAttribute("x", String(x));
  t.setAttribute("y", String(y));
  t.setAttribute("font-weight", weight);
  t.setAttribute("fill", fill);
  t.textContent = content;
  return t;
}

/** Every fill or stroke written as var(--token) gets the value the token has on the page: the image is drawn without the page's CSS. */
function inlineTokens(root: SVGSVGElement, page: CSSStyleDeclaration): void {
  for (const element of root.querySelectorAll("[fill], [stroke]")) {
    for (const name of ["fill", "stroke"]) {
      const value = element.getAttribute(name);
      if (value !== null && value.includes("var(")) element.setAttribute(name, resolveVars(value, page));
    }
  }
}

/** Each `var(--name)` replaced by the property's value in `style`; one the page does not set is left as written. */
function resolveVars(value: string, style: CSSStyleDeclaration): string {
  return value.replace(/var\(\s*(--[\w-]+)\s*\)/g, (whole, name: string) => style.getPropertyValue(name).trim() || whole);
}
