"use client";
/** The store version a chart renders at: republished at most once per animation frame. */
import { useSyncExternalStore } from "react";
import type { FrameThrottledVersion } from "./model/chart-frame";

export function useFrameVersion(frames: FrameThrottledVersion): number {
  return useSyncExternalStore(frames.subscribe, frames.getVersion, frames.getVersion);
}
