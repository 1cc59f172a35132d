"use client";
/**
 * A version that follows `version` at most once per `intervalMs` (trailing:
 * the latest version always arrives). Run-wide means need not redraw at 60
 * frames a second while points stream in; redrawing the bar charts costs
 * about 20 ms a time here, more than a frame.
 */
import { useEffect, useRef, useState } from "react";
import { trailingDelay } from "./model/chart-frame";

export function useTrailingVersion(version: number, intervalMs: number): number {
  const [published, setPublished] = useState(version);
  const lastAt = useRef(-Infinity);
  useEffect(() => {
    if (version === published) return;
    const timer = setTimeout(
      () => {
        lastAt.current = performance.now();
        setPublished(version);
      },
      trailingDelay(performance.now(), lastAt.current, intervalMs),
    );
    return () => clearTimeout(timer);
  }, [version, published, intervalMs]);
  return published;
}
