/**
 * Typing latency in a notebook, with and without another cell streaming
 * metrics into its live charts (part of `npm run bench:charts`).
 *
 * A new notebook gets two cells. Cell 1 holds a loop that logs loss and
 * per-rank timings for 4 ranks (`lab.log`, run_id "DDP x4"), paced by the
 * kernel to STEPS_PER_SECOND × 4 metric messages a second for about 20 s.
 * In the streaming run it is started (Control+Enter) and the typing begins
 * once its loss chart has drawn live points; in the baseline it is never
 * run. Then TYPED_TEXT is typed into cell 2's Monaco editor with
 * `keyboard.type(text, { delay: 30 })`, and the page itself measures:
 * - every keystroke: from the keydown's `timeStamp` (when the browser got the
 *   key, so time spent queued behind other work counts) to the first task
 *   after the next animation frame (rAF → MessageChannel), i.e. the frame
 *   that can show the character;
 * - Event Timing entries (durationThreshold 16 ms) of keydown/keypress/input/
 *   keyup: input to next paint as the browser reports it (8 ms granularity);
 * - long animation frames (> 50 ms) with the scripts that ran in them.
 * The page is scrolled to the bottom first, so that the typed lines and the
 * loss chart are both on screen: a key typed off screen paints nothing, and
 * Event Timing then reports the time to whatever paints next (the next chart
 * update, up to 100 ms later), which is not the editor's latency.
 * Also recorded:
 * - which React components rendered, through a stub of the React DevTools
 *   hook (React calls `onCommitFiberRoot` in production builds too): a
 *   component fiber rendered in a commit when it is new or has the
 *   PerformedWork flag, walking only subtrees React did not bail out of
 *   (the rule React DevTools uses). Components are told apart by their
 *   props (names are minified).
 * The in-page code is a plain string: tsx would wrap functions passed to
 * page.evaluate in helpers the page does not have.
 */
import type { Browser, Page } from "playwright-core";
import { newNotebookFromList } from "../helpers/new-notebook";

/** Steps a second the kernel paces itself to; every step logs one message per rank. */
export const STEPS_PER_SECOND = 400;
export const RANKS = 4;
const STEPS = STEPS_PER_SECOND * 20;
/** Live points the loss chart must show before typing starts (the stream is up and the charts have drawn). */
const WARM_POINTS = 2_000;
export const KEY_DELAY_MS = 30;

export const STREAM_CODE = [
  "import time, mgpulab as lab",
  "t0 = time.time()",
  `for step in range(${STEPS}): [lab.log(step, loss=2.0/(1.0+0.01*step)+0.01*r, rank=r, run_id='DDP x4', forward_ms=3.0+r, backward_ms=6.0+r, step_ms=10.0+0.5*r) for r in range(${RANKS})]; time.sleep(max(0.0, t0+(step+1)/${STEPS_PER_SECOND}.0-time.time()))`,
];

/** ~200 characters of ordinary code (no indentation: Monaco re-indents typed indentation). */
export const TYPED_TEXT = [
  "values = list(range(100))",
  "total = sum(values)",
  "mean = total / len(values)",
  "label = 'typed in a second cell while the first one streams metrics'",
  "spread = max(values) - min(values)",
  "print(label, mean, total, spread)",
].join("\n");

/**
 * Waits until `expression` is true in the page, asking it every 50 ms. Not
 * page.waitForFunction: it compiles a string with `new Function` in the
 * page, which the lab's production CSP (no 'unsafe-eval') refuses.
 */
async function untilInPage(page: Page, expression: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting in the page for ${expression.slice(0, 120)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const PROBE_SCRIPT = String.raw`
(() => {
  const NAMES = new Set(["keydown", "keypress", "input", "keyup"]);
  const COMPONENT_TAGS = new Set([0, 1, 11, 14, 15]);
  const PERFORMED_WORK = 1;
  const probe = { recording: false, startedAt: 0, keys: [], events: [], frames: [], commits: 0, renders: {}, observers: [] };
  window.__typingProbe = probe;

  const labelOf = (props) => {
    if (props === null || typeof props !== "object") return "other";
    if (props.cell && props.controller) return "Cell " + (props.index + 1);
    if (props.options && props.onMount && "defaultValue" in props) {
      const m = /Cell (\d+)/.exec(String(props.options.ariaLabel));
      return "Monaco editor " + (m ? m[1] : "?");
    }
    if (props.store && "primaryId" in props && "version" in props) return "ChartPanel";
    if (props.lines && "budget" in props && "version" in props) return "LossChart";
    if (props.metrics && props.cellId) return "LiveMetricsTable";
    if (typeof props.notebookId === "string" && Object.keys(props).length === 1) return "Notebook";
    return "other";
  };
  // Components under the chart panel other than the two named ones count as "chart internals" (recharts).
  const census = (root) => {
    const stack = [[root.current, false]];
    while (stack.length > 0) {
      const [fiber, inCharts] = stack.pop();
      const prev = fiber.alternate;
      let label = null;
      if (COMPONENT_TAGS.has(fiber.tag)) {
        label = labelOf(fiber.memoizedProps);
        if (label === "other") label = inCharts ? "chart internals" : "other";
        if (prev === null || (fiber.flags & PERFORMED_WORK) !== 0) probe.renders[label] = (probe.renders[label] || 0) + 1;
      }
      if (prev !== null && fiber.child === prev.child) continue;
      const below = inCharts || label === "ChartPanel";
      for (let child = fiber.child; child !== null; child = child.sibling) stack.push([child, below]);
    }
  };
  const noop = () => {};
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    supportsFiber: true,
    renderers: new Map(),
    inject: () => 1,
    checkDCE: noop,
    onScheduleFiberRoot: noop,
    onCommitFiberUnmount: noop,
    onPostCommitFiberRoot: noop,
    setStrictMode: noop,
    onCommitFiberRoot: (_id, root) => {
      if (!probe.recording) return;
      probe.commits += 1;
      try { census(root); } catch (err) { probe.renders["census error: " + err] = 1; }
    },
  };

  addEventListener("keydown", (e) => {
    if (!probe.recording) return;
    const key = { key: e.key, at: e.timeStamp, handledAt: performance.now(), frameAt: null };
    probe.keys.push(key);
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { key.frameAt = performance.now(); };
      channel.port2.postMessage(null);
    });
  }, true);

  const takeEvents = (entries) => {
    for (const e of entries) {
      if (e.startTime < probe.startedAt || !NAMES.has(e.name)) continue;
      probe.events.push({ name: e.name, startTime: e.startTime, duration: e.duration, inputDelay: e.processingStart - e.startTime,
        processing: e.processingEnd - e.processingStart, interactionId: e.interactionId });
    }
  };
  const takeFrames = (entries) => {
    for (const f of entries) {
      if (f.startTime < probe.startedAt) continue;
      probe.frames.push({ startTime: f.startTime, duration: f.duration, blockingDuration: f.blockingDuration,
        scripts: (f.scripts || []).map((s) => ({ invoker: s.invoker, invokerType: s.invokerType, source: s.sourceFunctionName + " " + s.sourceURL + ":" + s.sourceCharPosition, duration: s.duration })) });
    }
  };
  probe.start = () => {
    Object.assign(probe, { keys: [], events: [], frames: [], commits: 0, renders: {}, startedAt: performance.now(), recording: true });
    const events = new PerformanceObserver((list) => takeEvents(list.getEntries()));
    events.observe({ type: "event", durationThreshold: 16, buffered: true });
    probe.observers = [[events, takeEvents]];
    if (PerformanceObserver.supportedEntryTypes.includes("long-animation-frame")) {
      const frames = new PerformanceObserver((list) => takeFrames(list.getEntries()));
      frames.observe({ type: "long-animation-frame", buffered: true });
      probe.observers.push([frames, takeFrames]);
    }
  };
  probe.stop = () => {
    for (const [observer, take] of probe.observers) {
      take(observer.takeRecords());
      observer.disconnect();
    }
    probe.recording = false;
    return { keys: probe.keys, events: probe.events, frames: probe.frames, commits: probe.commits, renders: probe.renders,
      longFramesSupported: PerformanceObserver.supportedEntryTypes.includes("long-animation-frame") };
  };
})();
`;

/** Whether cell 2's cursor and cell 1's loss plot are inside the viewport. */
const ON_SCREEN = `(() => {
  const inside = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; };
  const cursor = document.querySelectorAll('[data-testid="cell-editor"]')[1].querySelector(".cursor");
  return { cursor: inside(cursor) === true, chart: inside(document.querySelector('[data-testid="chart-loss"] .chart-plot')) };
})()`;

export interface RawProbe {
  keys: Array<{ key: string; at: number; handledAt: number; frameAt: number | null }>;
  events: Array<{ name: string; startTime: number; duration: number; inputDelay: number; processing: number; interactionId: number }>;
  frames: Array<{ startTime: number; duration: number; blockingDuration: number; scripts: Array<{ invoker: string; invokerType: string; source: string; duration: number }> }>;
  commits: number;
  renders: Record<string, number>;
  longFramesSupported: boolean;
}

export interface Spread {
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

export interface TypingResult {
  streaming: boolean;
  /** The text landed in cell 2 and, when streaming, the run streamed for the whole typing. */
  ok: boolean;
  notes: string[];
  keys: number;
  typingSeconds: number;
  /** keydown timeStamp → first task after the next animation frame. */
  keyToFrame: Spread & { over16: number; over50: number };
  /** keydown timeStamp → its handler running (time queued behind other work). */
  inputDelay: Spread;
  /** Event Timing entries ≥ 16 ms (smaller ones are not reported). */
  eventTiming: { entries: number; over50: number; maxMs: number; maxProcessingMs: number; maxInputDelayMs: number };
  longFrames: { supported: boolean; count: number; maxMs: number; blockingMs: number; topScripts: Array<{ script: string; ms: number }> };
  commits: number;
  renders: Record<string, number>;
  /** Streaming run only: loss points the chart gained while the keys were typed, per second (= metric messages a second). */
  stream: { messagesPerSecond: number; pointsAtStart: number; pointsAtEnd: number; runningAtEnd: boolean } | null;
}

const round = (n: number): number => Math.round(n * 10) / 10;

function spread(samples: readonly number[]): Spread {
  if (samples.length === 0) return { medianMs: NaN, p95Ms: NaN, maxMs: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { medianMs: round(at(0.5)), p95Ms: round(at(0.95)), maxMs: round(sorted.at(-1)!) };
}

function summarise(raw: RawProbe): Omit<TypingResult, "streaming" | "ok" | "notes" | "typingSeconds" | "stream"> {
  const framed = raw.keys.filter((k) => k.frameAt !== null);
  const toFrame = framed.map((k) => k.frameAt! - k.at);
  const scripts = new Map<string, number>();
  for (const frame of raw.frames) {
    for (const s of frame.scripts) {
      const key = `${s.invokerType} ${s.invoker} (${s.source})`;
      scripts.set(key, (scripts.get(key) ?? 0) + s.duration);
    }
  }
  return {
    keys: raw.keys.length,
    keyToFrame: { ...spread(toFrame), over16: toFrame.filter((t) => t > 16.7).length, over50: toFrame.filter((t) => t > 50).length },
    inputDelay: spread(raw.keys.map((k) => k.handledAt - k.at)),
    eventTiming: {
      entries: raw.events.length,
      over50: raw.events.filter((e) => e.duration > 50).length,
      maxMs: Math.max(0, ...raw.events.map((e) => e.duration)),
      maxProcessingMs: round(Math.max(0, ...raw.events.map((e) => e.processing))),
      maxInputDelayMs: round(Math.max(0, ...raw.events.map((e) => e.inputDelay))),
    },
    longFrames: {
      supported: raw.longFramesSupported,
      count: raw.frames.length,
      maxMs: round(Math.max(0, ...raw.frames.map((f) => f.duration))),
      blockingMs: round(raw.frames.reduce((n, f) => n + f.blockingDuration, 0)),
      topScripts: [...scripts.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([script, ms]) => ({ script, ms: round(ms) })),
    },
    commits: raw.commits,
    renders: raw.renders,
  };
}

async function lossPoints(page: Page): Promise<number> {
  return Number(await page.getByTestId("cell").first().getByTestId("chart-loss").getAttribute("data-points"));
}

/** For investigations (traces, CPU counters): called around the typing, and the probe's raw records. */
export interface TypingHooks {
  beforeTyping?(page: Page): Promise<void>;
  afterTyping?(page: Page, raw: RawProbe): Promise<void>;
}

/** One run: a fresh context and notebook; cell 1 streams when `streaming`, cell 2 is typed in. */
export async function typingRun(browser: Browser, url: string, streaming: boolean, hooks: TypingHooks = {}): Promise<TypingResult> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript({ content: PROBE_SCRIPT });
  const notes: string[] = [];
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.locator('[data-testid="notebook-list"][data-status="ready"]').waitFor();
    await newNotebookFromList(page, streaming ? "Typing while a cell streams" : "Typing, nothing streaming");
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    const editors = page.getByTestId("cell-editor");
    await editors.first().locator(".monaco-editor").waitFor();
    await editors.first().click();
    await page.keyboard.type(STREAM_CODE.join("\n"));
    await page.getByTestId("add-cell-bottom").click();
    await editors.nth(1).locator(".monaco-editor").waitFor();

    if (streaming) {
      await editors.first().click();
      await page.keyboard.press("Control+Enter");
      const started = untilInPage(
        page,
        `(() => {
          const cell = document.querySelector('[data-testid="cell"]');
          const chart = cell && cell.querySelector('[data-testid="chart-loss"]');
          return cell.getAttribute("data-run-state") === "running" && chart !== null && Number(chart.getAttribute("data-points")) >= ${WARM_POINTS};
        })()`,
        120_000,
      );
      await started.catch(async (err: unknown) => {
        const output = await page.getByTestId("cell").first().textContent();
        throw new Error(`the streaming cell did not draw ${WARM_POINTS} live points: ${String(err)}\ncell 1: ${output}`);
      });
    }
    await editors.nth(1).click();
    await editors.nth(1).locator(".monaco-editor.focused").waitFor();
    // Cell 1's text saved in both runs (a run saves it; unsaved, it would be re-rendered on every keystroke in cell 2).
    await page.locator('[data-testid="save-status"][data-state="saved"]').waitFor();
    // Cell 2 grows by five lines while typed in and the page does not follow the cursor: scrolled to the
    // bottom, the typed text stays on screen (off screen a key paints nothing, and Event Timing then
    // waits for whatever paints next, such as the next chart update).
    await page.evaluate("document.scrollingElement.scrollTo(0, document.scrollingElement.scrollHeight)");

    await hooks.beforeTyping?.(page);
    const pointsAtStart = streaming ? await lossPoints(page) : 0;
    await page.evaluate("window.__typingProbe.start()");
    const typingStart = performance.now();
    await page.keyboard.type(TYPED_TEXT, { delay: KEY_DELAY_MS });
    const typingSeconds = (performance.now() - typingStart) / 1000;
    const pointsAtEnd = streaming ? await lossPoints(page) : 0;
    const runningAtEnd = (await page.getByTestId("cell").first().getAttribute("data-run-state")) === "running";
    // The last keys' frames and Event Timing entries arrive after their paint.
    await untilInPage(page, "window.__typingProbe.keys.every((k) => k.frameAt !== null)", 30_000);
    await page.evaluate("new Promise((resolve) => setTimeout(resolve, 250))");
    const raw = (await page.evaluate("window.__typingProbe.stop()")) as RawProbe;
    await hooks.afterTyping?.(page, raw);

    const typed = (await page.evaluate(
      `document.querySelectorAll('[data-testid="cell-editor"]')[1].querySelector(".view-lines").innerText.replace(/\u00a0/g, " ")`,
    )) as string;
    const lastLine = TYPED_TEXT.split("\n").at(-1)!;
    if (!typed.includes(lastLine)) notes.push(`cell 2 does not show the typed text (last line ${JSON.stringify(lastLine)} missing)`);
    const onScreen = (await page.evaluate(ON_SCREEN)) as { cursor: boolean; chart: boolean | null };
    if (!onScreen.cursor) notes.push("the cursor in cell 2 was off screen at the end of the typing");
    if (streaming && onScreen.chart !== true) notes.push("the loss chart was off screen at the end of the typing");
    if (streaming && !runningAtEnd) notes.push("the streaming run ended before the typing did");
    if (streaming) {
      // Let the run finish so that it does not load the machine during whatever is measured next.
      await page.locator('[data-testid="cell"][data-run-state="idle"]').first().waitFor({ timeout: 120_000 });
    }
    return {
      streaming,
      ok: notes.length === 0,
      notes,
      typingSeconds: round(typingSeconds),
      ...summarise(raw),
      stream: streaming
        ? { messagesPerSecond: Math.round((pointsAtEnd - pointsAtStart) / typingSeconds), pointsAtStart, pointsAtEnd, runningAtEnd }
        : null,
    };
  } finally {
    await context.close();
  }
}
