/**
 * Keeps one cell run's outputs within a memory budget: the first `headChars`
 * of stream text are kept whole, then only the last `tailChars`, with a count
 * of what was elided between. Rich outputs (results, errors, images) are
 * never dropped. Pure: no timers, no sockets.
 */
import type { CellOutput } from "../protocol/notebook-model";

export type StreamName = "stdout" | "stderr";
export interface StreamSegment {
  name: StreamName;
  text: string;
}

export interface OutputBudget {
  headChars: number;
  tailChars: number;
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

  stream(name: StreamName, text: string): RecorderChange[] {
    if (text.length === 0) return [];
    const changes: RecorderChange[] = [];
    if (!this.overflowing) {
      const room = this.budget.headChars - this.headStreamChars;
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
    // While overflowing, a rich output goes after the tail in order; it is kept whole.
    if (this.overflowing) {
      if (this.elidedChars > 0 || this.tail.length > 0) changes.push({ kind: "frozen", elided: this.elidedChars, segments: this.tailSegments() });
      this.flushTailIntoHead();
    }
    this.head.push(output);
    changes.push({ kind: "output", output });
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

  private appendToHead(name: StreamName, text: string): void {
    this.headStreamChars += text.length;
    const last = this.head[this.head.length - 1];
    if (last?.kind === "stream" && last.name === name) {
      this.head[this.head.length - 1] = { ...last, text: last.text + text };
    } else {
      this.head.push({ kind: "stream", name, text });
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

function cutBeforeSurrogate(text: string, at: number): string {
  if (at <= 0) return "";
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, at - 1) : text.slice(0, at);
}
