/**
 * Numbers every event of a notebook and keeps the recent ones, so a viewer
 * that reconnects (or a second viewer) can be sent exactly what it missed.
 * Bounded by event count and by characters; older history is served as a
 * snapshot instead.
 */
import { randomUUID } from "node:crypto";
import type { JournalPosition, NotebookEvent, SequencedEvent } from "../core/protocol/socket-api";

export interface JournalLimits {
  maxEvents: number;
  maxChars: number;
}

export const DEFAULT_JOURNAL_LIMITS: JournalLimits = { maxEvents: 20_000, maxChars: 8 * 1024 * 1024 };

type Entry = SequencedEvent & { chars: number };

/** Dropped entries are compacted away once at least this many lead the array and they outnumber the kept ones. */
const COMPACT_AFTER = 1024;

export class EventJournal {
  readonly epoch = randomUUID();
  private seq = 0;
  // Oldest first, from `head` on; what is before `head` was dropped. Not `shift()`: a full journal's array
  // (20,000 entries) lives in V8's large-object space, which cannot trim its start, so every shift copied
  // the whole array: 20 µs an event, 16 % of the server's CPU per trivial cell (BENCHMARKS.md, issue 29).
  private entries: Array<Entry | undefined> = [];
  private head = 0;
  private chars = 0;

  constructor(private readonly limits: JournalLimits = DEFAULT_JOURNAL_LIMITS) {}

  get position(): JournalPosition {
    return { epoch: this.epoch, seq: this.seq };
  }

  private get size(): number {
    return this.entries.length - this.head;
  }

  record(event: NotebookEvent): number {
    this.seq += 1;
    const chars = approximateSize(event);
    this.entries.push({ seq: this.seq, event, chars });
    this.chars += chars;
    while (this.size > this.limits.maxEvents || (this.chars > this.limits.maxChars && this.size > 1)) {
      this.chars -= this.entries[this.head]!.chars;
      this.entries[this.head] = undefined; // its event (up to megabytes of output) is garbage now, not at compaction
      this.head += 1;
    }
    // One copy of the kept entries per as many drops: constant time per event, amortized.
    if (this.head >= COMPACT_AFTER && this.head >= this.size) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return this.seq;
  }

  /** The events after `from`, or null when they are no longer all here (then send a snapshot). */
  since(from: JournalPosition): SequencedEvent[] | null {
    if (from.epoch !== this.epoch || from.seq > this.seq) return null;
    if (from.seq === this.seq) return [];
    const first = this.entries[this.head];
    if (!first || first.seq > from.seq + 1) return null;
    return this.entries.slice(this.head + from.seq + 1 - first.seq).map((entry) => ({ seq: entry!.seq, event: entry!.event }));
  }
}

function approximateSize(event: NotebookEvent): number {
  switch (event.type) {
    case "cell-stream":
      return event.text.length + 64;
    case "cell-stream-tail":
      return event.tail.reduce((sum, segment) => sum + segment.text.length, 64);
    case "cell-source":
      return event.source.length + 64;
    case "cell-output":
    case "cell-inserted":
      return JSON.stringify(event).length;
    default:
      return 64;
  }
}
