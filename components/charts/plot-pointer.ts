"use client";
/**
 * Where the mouse is, in data units of a chart's x axis: a probe rendered
 * inside the recharts chart hands out the axis' inverse scale and plot area
 * (recharts 3 hooks), and pointer events on the wrapper convert through it.
 */
import { useLayoutEffect, type RefObject } from "react";
import { usePlotArea, useXAxisInverseScale, type InverseScaleFunction, type PlotArea } from "recharts";

export interface PlotProbe {
  invert: InverseScaleFunction | null;
  plot: PlotArea | null;
}

export const EMPTY_PROBE: PlotProbe = { invert: null, plot: null };

/** Renders nothing; keeps `probe` up to date after each chart commit. */
export function ScaleProbe({ probe }: { probe: RefObject<PlotProbe> }) {
  const invert = useXAxisInverseScale();
  const plot = usePlotArea();
  useLayoutEffect(() => {
    probe.current = { invert: invert ?? null, plot: plot ?? null };
  });
  return null;
}

/** The x value under the pointer, or null outside the plot area. */
export function pointerX(probe: PlotProbe, clientX: number, container: HTMLElement): number | null {
  const svg = container.querySelector("svg.recharts-surface");
  if (!svg || !probe.invert || !probe.plot) return null;
  const px = clientX - svg.getBoundingClientRect().left;
  if (px < probe.plot.x || px > probe.plot.x + probe.plot.width) return null;
  const x = Number(probe.invert(px));
  return Number.isFinite(x) ? x : null;
}
