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

export class EventJournal {
  readonly epoch = randomUUID();
  private seq = 0;
  private readonly entries: Array<SequencedEvent & { chars: number }> = [];
  private chars = 0;

  constructor(private readonly limits: JournalLimits = DEFAULT_JOURNAL_LIMITS) {}

  get position(): JournalPosition {
    return { epoch: this.epoch, seq: this.seq };
  }

  record(event: NotebookEvent): number {
    this.seq += 1;
    const chars = approximateSize(event);
    this.entries.push({ seq: this.seq, event, chars });
    this.chars += chars;
    while (this.entries.length > this.limits.maxEvents || (this.chars > this.limits.maxChars && this.entries.length > 1)) {
      this.chars -= this.entries.shift()!.chars;
    }
    return this.seq;
  }

  /** The events after `from`, or null when they are no longer all here (then send a snapshot). */
  since(from: JournalPosition): SequencedEvent[] | null {
    if (from.epoch !== this.epoch || from.seq > this.seq) return null;
    if (from.seq === this.seq) return [];
    const first = this.entries[0];
    if (!first || first.seq > from.seq + 1) return null;
    return this.entries.slice(from.seq + 1 - first.seq).map(({ seq, event }) => ({ seq, event }));
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
