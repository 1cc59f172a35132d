/**
 * A running cell's elapsed time and, when it reports progress, an estimate of
 * the time left.
 *
 * Progress is read from the cell's own live console output: the last
 * tqdm-style counter `n/total` (tqdm prints `42/100 [00:03<00:04, …]`, many
 * training loops print `step 42/100`). The estimate assumes the remaining
 * steps take as long as the steps so far (elapsed / n × (total − n)), and is
 * only given once at least one step is done and the counter is sane
 * (0 < n ≤ total).
 */

export interface Progress {
  done: number;
  total: number;
}

/** The last `n/total` counter in `text` (only its last 4 KB are read: the counter that matters is the newest). */
export function lastProgress(text: string): Progress | null {
  const tail = text.slice(-4096);
  const re = /(?<![\w./])(\d{1,9})\s?\/\s?(\d{1,9})(?![\w/]|\.\d)/g;
  let found: Progress | null = null;
  for (let m = re.exec(tail); m !== null; m = re.exec(tail)) {
    const done = Number(m[1]);
    const total = Number(m[2]);
    if (total > 0 && done <= total) found = { done, total };
  }
  return found;
}

/** Milliseconds left, or null when there is nothing to estimate from. */
export function etaMs(elapsedMs: number, progress: Progress | null): number | null {
  if (progress === null || progress.done <= 0 || progress.done > progress.total || elapsedMs <= 0) return null;
  return (elapsedMs / progress.done) * (progress.total - progress.done);
}

/** "0:07", "1:02:03": a timer's text. */
export function clockText(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}
