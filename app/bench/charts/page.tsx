"use client";
/** Browser benchmark of the cell charts (see tests/bench/charts.ts). */
import ChartsBench from "./ChartsBench";

export default function ChartsBenchPage() {
  return <ChartsBench />;
}
