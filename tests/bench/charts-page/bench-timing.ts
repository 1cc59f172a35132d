/**
 * Timing helpers for the chart benchmark page: frames, "after paint", and
 * waiting for the chart's DOM to show what was asked. "Painted" is the first
 * task after the animation frame in which the condition held: tasks posted
 * from a frame callback run after that frame's style, layout and paint.
 */

export function nextFrame(): Promise<number> {
  return new Promise((resolve) => requestAnimationFrame(resolve));
}

/** Resolves in the first task after the current frame's rendering. */
export function afterPaint(): Promise<void> {
  return new Promise((resolve) => {
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve();
      channel.port2.postMessage(null);
    });
  });
}

/** Checks `ready` once per frame; resolves after the paint of the first frame where it holds. */
export async function paintedWhen(ready: () => boolean, limitMs: number): Promise<boolean> {
  const start = performance.now();
  for (;;) {
    if (ready()) {
      await afterPaint();
      return true;
    }
    if (performance.now() - start > limitMs) return false;
    await nextFrame();
  }
}

/** The loss chart has drawn a line (its path has a `d`) and represents `points` real points. */
export function lossChartShows(points: number): boolean {
  const chart = document.querySelector('[data-testid="chart-loss"]');
  if (!chart || chart.getAttribute("data-points") !== String(points)) return false;
  const path = chart.querySelector("path.chart-line");
  return (path?.getAttribute("d")?.length ?? 0) > 0;
}

export interface Stats {
  count: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  meanMs: number;
}

export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: sorted.length,
    medianMs: round(at(0.5)),
    p95Ms: round(at(0.95)),
    maxMs: round(sorted.at(-1)!),
    meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length),
  };
}
