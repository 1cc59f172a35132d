/**
 * The two measured scenarios, run against the real ChartPanel:
 * - first render: 10^6 loss points (+ per-rank timings) loaded into a store
 *   ("data ready"), then the panel mounted, until the loss line is painted;
 * - live update: a 10^5-point run receiving 50 updates of 100 steps each
 *   (loss and every timing metric, 2 ranks); each update timed from the
 *   append to the paint of the frame that shows it.
 * Each records performance.mark/measure entries named "charts:…".
 */
import { FrameThrottledVersion } from "../../../components/charts/model/chart-frame";
import { syntheticExecution, lossColumns } from "../../helpers/chart-synthetic";
import { MetricStore } from "../../../server/core/charts/metric-store";
import type { MetricPointMessage } from "../../../server/core/protocol/metrics-model";
import { afterPaint, lossChartShows, nextFrame, paintedWhen, stats, type Stats } from "./bench-timing";

export interface PanelState {
  store: MetricStore;
  frames: FrameThrottledVersion;
  executionId: string;
  budget: number | null;
}

export type Mount = (panel: PanelState | null) => void;

export type ScenarioResult =
  | { scenario: "first-render"; mode: string; points: number; ok: boolean; firstRenderMs: number; loadMs: number }
  | { scenario: "live"; mode: string; points: number; ok: boolean; updates: Stats; staleUpdates: number };

const TAG = "DDP x2";
const LIMIT_MS = 300_000;

function makeRun(executionId: string, lossPoints: number): { store: MetricStore; frames: FrameThrottledVersion } {
  const store = new MetricStore();
  const metrics = syntheticExecution(executionId, [{ tag: TAG, ranks: 2, lossPoints, timingSteps: Math.min(lossPoints, 10_000), stepMs: 40, batch: 64 }]);
  store.load(metrics);
  return { store, frames: new FrameThrottledVersion(store) };
}

export async function firstRender(mount: Mount, budget: number | null, points = 1_000_000): Promise<ScenarioResult> {
  const mode = budget === null ? "all points" : `downsampled (${budget}/line)`;
  mount(null);
  await afterPaint();
  performance.mark("charts:load:start");
  const { store, frames } = makeRun("bench-first", points);
  performance.mark("charts:data-ready");
  const load = performance.measure("charts:load", "charts:load:start", "charts:data-ready");
  mount({ store, frames, executionId: "bench-first", budget });
  const ok = await paintedWhen(() => lossChartShows(points), LIMIT_MS);
  performance.mark("charts:painted");
  const measure = performance.measure(`charts:first-render:${mode}`, "charts:data-ready", "charts:painted");
  return { scenario: "first-render", mode, points, ok, firstRenderMs: round(measure.duration), loadMs: round(load.duration) };
}

export async function liveUpdates(mount: Mount, budget: number | null, points = 100_000, updates = 50, perUpdate = 100): Promise<ScenarioResult> {
  const mode = budget === null ? "all points" : `downsampled (${budget}/line)`;
  mount(null);
  await afterPaint();
  const { store, frames } = makeRun("bench-live", points);
  mount({ store, frames, executionId: "bench-live", budget });
  let ok = await paintedWhen(() => lossChartShows(points), LIMIT_MS);
  const durations: number[] = [];
  let stale = 0;
  for (let u = 0; u < updates && ok; u++) {
    await nextFrame();
    const from = points + u * perUpdate;
    const batch = livePoints(from, perUpdate);
    const expected = from + perUpdate;
    // Inside one frame: append, publish (React renders synchronously for useSyncExternalStore), then wait for that frame's paint.
    const timed = await new Promise<number>((resolve) => {
      requestAnimationFrame(() => {
        performance.mark(`charts:live:${u}:start`);
        store.append("bench-live", batch);
        frames.flush();
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          performance.mark(`charts:live:${u}:painted`);
          resolve(performance.measure(`charts:live-update:${mode}`, `charts:live:${u}:start`, `charts:live:${u}:painted`).duration);
        };
        channel.port2.postMessage(null);
      });
    });
    if (!lossChartShows(expected)) {
      stale++;
      ok = await paintedWhen(() => lossChartShows(expected), 10_000);
    }
    durations.push(timed);
  }
  return { scenario: "live", mode, points, ok: ok && stale === 0, updates: stats(durations), staleUpdates: stale };
}

/** `count` steps from `from`: loss on rank 0, every timing metric on both ranks. */
function livePoints(from: number, count: number): MetricPointMessage[] {
  const loss = lossColumns(count, from);
  const out: MetricPointMessage[] = [];
  for (let i = 0; i < count; i++) {
    const step = from + i;
    const timing = { step_ms: 40, data_ms: 4, forward_ms: 12, backward_ms: 18, comm_ms: 8, optimizer_ms: 4, samples: 32, memory_mib: 320 };
    out.push({ tag: TAG, rank: 0, step, values: { loss: loss.values[i]!, ...timing } });
    out.push({ tag: TAG, rank: 1, step, values: { ...timing, step_ms: 41 } });
  }
  return out;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
