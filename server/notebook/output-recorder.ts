/**
 * Keeps one cell run's outputs within a memory budget: the first `headChars`
 * of stream text are kept whole, then only the last `tailChars`, with a count
 * of what was elided between. Rich outputs (results, errors, images) are
 * kept whole, unless the budget bounds them too (`richOutputChars`): then an
 * oversized one keeps what fits and is followed by an elided marker. Pure: no
 * timers, no sockets. Imported .ipynb outputs go through the same recorder.
 */
import type { CellOutput } from "../core/protocol/notebook-model";
import { appendCollapsed, collapseOverwrites } from "../core/notebook/stream-overwrites";

export type StreamName = "stdout" | "stderr";
export interface StreamSegment {
  name: StreamName;
  text: string;
}

export interface OutputBudget {
  headChars: number;
  tailChars: number;
  /** At most this many characters of one rich output (its mime values, or an error's text); unset: no bound. */
  richOutputChars?: number;
}

export const DEFAULT_OUTPUT_BUDGET: OutputBudget = { headChars: 256 * 1024, tailChars: 64 * 1024 };

/** What a viewer must be told (and the output log must record) after a write. */
export type RecorderChange =
  | { kind: "append"; name: StreamName; text: string }
  | { kind: "tail" }
  /** A rich output arrived while overflowing: the tail so far is now fixed in place before it. */
  | { kind: "frozen"; elided: number; segments: StreamSegment[] }
  | { kind: "output"; output: CellOutput };

export class OutputRecorder {
  private readonly head: CellOutput[] = [];
  private headStreamChars = 0;
  private readonly tail: StreamSegment[] = [];
  private tailLength = 0;
  private elidedChars = 0;
  private overflowing = false;

  constructor(private readonly budget: OutputBudget = DEFAULT_OUTPUT_BUDGET) {}

  get isOverflowing(): boolean {
    return this.overflowing;
  }

  get elided(): number {
    return this.elidedChars;
  }

  /** How many outputs come before the tail (and its elided marker) in `outputs()`: they no longer change. */
  get headOutputs(): number {
    return this.head.length;
  }

  stream(name: StreamName, text: string): RecorderChange[] {
    if (text.length === 0) return [];
    const changes: RecorderChange[] = [];
    if (!this.overflowing) {
      const room = this.budget.headChars - this.headStreamChars;
      // A progress bar's redraws collapse (stream-overwrites.ts): what counts is what the head keeps.
      if (text.includes("\r") && this.collapsedGrowth(name, text) <= room) {
        this.appendToHead(name, text);
        return [{ kind: "append", name, text }];
      }
      const kept = text.length <= room ? text : cutBeforeSurrogate(text, room);
      if (kept.length > 0) {
        this.appendToHead(name, kept);
        changes.push({ kind: "append", name, text: kept });
      }
      if (kept.length === text.length) return changes;
      this.overflowing = true;
      text = text.slice(kept.length);
    }
    this.appendToTail(name, text);
    changes.push({ kind: "tail" });
    return changes;
  }

  output(output: CellOutput): RecorderChange[] {
    const changes: RecorderChange[] = [];
    // While overflowing, a rich output goes after the tail in order.
    if (this.overflowing) {
      if (this.elidedChars > 0 || this.tail.length > 0) changes.push({ kind: "frozen", elided: this.elidedChars, segments: this.tailSegments() });
      this.flushTailIntoHead();
    }
    const kept = this.budget.richOutputChars === undefined ? [output] : fitRichOutput(output, this.budget.richOutputChars);
    this.head.push(...kept);
    for (const each of kept) changes.push({ kind: "output", output: each });
    return changes;
  }

  tailSegments(): StreamSegment[] {
    return this.tail.map((segment) => ({ ...segment }));
  }

  /** The outputs a viewer should see now. */
  outputs(): CellOutput[] {
    const outputs = [...this.head];
    if (this.elidedChars > 0) outputs.push({ kind: "elided", elidedBytes: this.elidedChars });
    for (const segment of this.tail) outputs.push({ kind: "stream", name: segment.name, text: segment.text });
    return outputs;
  }

  /** How many characters the head's stream text grows by when `text` is appended (less than its length when `\r` overwrites collapse). */
  private collapsedGrowth(name: StreamName, text: string): number {
    const last = this.head[this.head.length - 1];
    if (last?.kind === "stream" && last.name === name) return appendCollapsed(last.text, text).length - last.text.length;
    return collapseOverwrites(text).length;
  }

  private appendToHead(name: StreamName, text: string): void {
    const last = this.head[this.head.length - 1];
    if (last?.kind === "stream" && last.name === name) {
      const joined = appendCollapsed(last.text, text);
      this.headStreamChars += joined.length - last.text.length;
      this.head[this.head.length - 1] = { ...last, text: joined };
    } else {
      const collapsed = collapseOverwrites(text);
      this.headStreamChars += collapsed.length;
      this.head.push({ kind: "stream", name, text: collapsed });
    }
  }

  private appendToTail(name: StreamName, text: string): void {
    const last = this.tail[this.tail.length - 1];
    if (last && last.name === name) last.text += text;
    else this.tail.push({ name, text });
    this.tailLength += text.length;
    while (this.tailLength > this.budget.tailChars) {
      const first = this.tail[0]!;
      const excess = this.tailLength - this.budget.tailChars;
      if (first.text.length <= excess) {
        this.tail.shift();
        this.tailLength -= first.text.length;
        this.elidedChars += first.text.length;
      } else {
        first.text = first.text.slice(excess);
        this.tailLength -= excess;
        this.elidedChars += excess;
      }
    }
  }

  private flushTailIntoHead(): void {
    if (this.elidedChars > 0) this.head.push({ kind: "elided", elidedBytes: this.elidedChars });
    for (const segment of this.tail) this.head.push({ kind: "stream", name: segment.name, text: segment.text });
    this.tail.length = 0;
    this.tailLength = 0;
    this.elidedChars = 0;
    // Output after this point starts a new head budget only once the old one is used up again.
    this.overflowing = true;
  }
}

/** Characters a rich output holds: what its budget counts. */
export function richOutputChars(output: CellOutput): number {
  switch (output.kind) {
    case "result":
    case "display":
      return Object.values(output.data).reduce((sum, value) => sum + value.length, 0);
    case "error":
      return output.ename.length + output.evalue.length + output.traceback.reduce((sum, line) => sum + line.length, 0);
    default:
      return 0; // streams have their own budget; elided markers and hang reports are small
  }
}

/**
 * An output within `max` characters: a bundle keeps its smallest values that
 * fit together (its text/plain form, typically) and drops the large ones; an
 * error keeps its name, value and the last traceback lines that fit. What was
 * dropped is counted in an elided marker after it.
 */
function fitRichOutput(output: CellOutput, max: number): CellOutput[] {
  const total = richOutputChars(output);
  if (total <= max) return [output];
  if (output.kind === "result" || output.kind === "display") {
    const bySize = Object.entries(output.data).sort(([, a], [, b]) => a.length - b.length);
    const keep = new Set<string>();
    let used = 0;
    for (const [mime, value] of bySize) {
      if (used + value.length > max) break;
      keep.add(mime);
      used += value.length;
    }
    const elided: CellOutput = { kind: "elided", elidedBytes: total - used };
    if (keep.size === 0) return [elided];
    const data = Object.fromEntries(Object.entries(output.data).filter(([mime]) => keep.has(mime)));
    return [{ ...output, data }, elided];
  }
  if (output.kind === "error") {
    let used = output.ename.length + output.evalue.length;
    if (used > max) return [{ kind: "elided", elidedBytes: total }];
    let first = output.traceback.length;
    while (first > 0 && used + output.traceback[first - 1]!.length <= max) used += output.traceback[--first]!.length;
    return [{ ...output, traceback: output.traceback.slice(first) }, { kind: "elided", elidedBytes: total - used }];
  }
  return [output];
}

function cutBeforeSurrogate(text: string, at: number): string {
  if (at <= 0) return "";
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, at - 1) : text.slice(0, at);
}
