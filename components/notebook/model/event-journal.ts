/**
 * Where the client's copy of the server's document stands in the server's
 * event journal, and the rule for applying events: strictly in order, a
 * duplicate (already in the snapshot) skipped, a gap a reason to open again.
 * Events that arrive while an `open` waits for its answer are held and
 * applied after it. Separate from the socket so the ordering is tested alone.
 */
import type { JournalPosition, NotebookEvent, SequencedEvent } from "../../../server/core/protocol/socket-api";

export class EventJournal {
  /** Null: no position (none yet, or started over); events then apply as they come. */
  position: JournalPosition | null = null;
  /** Events that arrived while an `open` was waiting for its answer. */
  private early: SequencedEvent[] = [];

  constructor(
    private readonly apply: (event: NotebookEvent) => void,
    /** A gap: events were missed, the notebook must be opened again. */
    private readonly gap: () => void,
  ) {}

  /** A batch from the server; held while `synced` is false (an open is on its way). */
  receive(firstSeq: number, events: readonly NotebookEvent[], synced: boolean): void {
    events.forEach((event, index) => {
      if (synced) this.take(firstSeq + index, event);
      else this.early.push({ seq: firstSeq + index, event });
    });
  }

  /** A new open is on its way: what was held belongs to the old one. */
  dropHeld(): void {
    this.early = [];
  }

  /** The open was answered: apply what arrived meanwhile. */
  releaseHeld(): void {
    const early = this.early;
    this.early = [];
    for (const e of early) this.take(e.seq, e.event);
  }

  /** Apply one event in journal order: skip what is already applied, open again on a gap. */
  take(seq: number, event: NotebookEvent): void {
    const at = this.position;
    if (at === null) {
      this.apply(event);
      return;
    }
    if (seq <= at.seq) return;
    if (seq !== at.seq + 1) {
      this.gap();
      return;
    }
    this.position = { epoch: at.epoch, seq };
    this.apply(event);
  }
}
