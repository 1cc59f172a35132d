"use client";
/**
 * The time a page reads "3 min ago" against: moves on every `everyMs`, and,
 * given `freshAt` (the latest answer), again whenever that changes, so each
 * new answer is read against the clock it arrived with.
 */
import { useEffect, useState } from "react";

/** `freshAt` left out: the clock only ticks. */
const TICK_ONLY = Symbol("tick only");

export function useNow(everyMs: number, freshAt: unknown = TICK_ONLY): number {
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);

  useEffect(() => {
    if (freshAt !== TICK_ONLY) setNow(Date.now());
  }, [freshAt]);

  return now;
}
