"use client";
/**
 * The same reference for as long as a value's content is the same, so a
 * chart whose drawn numbers did not change is not redrawn (recharts redraws
 * cost milliseconds) even when its model was recomputed — live runs
 * recompute means whose samples or memory bars stay put.
 */
import { useRef } from "react";

export function useContentMemo<T>(value: T): T {
  const held = useRef<{ value: T; key: string } | null>(null);
  const key = JSON.stringify(value);
  if (held.current === null || held.current.key !== key) held.current = { value, key };
  return held.current.value;
}
