/**
 * Structural commands (insert, delete, move, kind, clear) the page already
 * applied on its own copy, kept until the server acknowledges them: sent
 * once per socket session, sent again after a reconnect, and replayed onto
 * every snapshot meanwhile (the document view does that). One the server
 * refuses is dropped and the server's view taken again. Separate from source
 * edits: these are ordered commands, not per-cell text.
 */
import type { StructuralCommand } from "./pending-edits";
import { isLost, type Reply } from "../../shell/model/socket-rpc";

interface OutboxEntry {
  command: StructuralCommand;
  /** Session it was last sent in; 0 = not sent yet. */
  sentIn: number;
}

/** What the outbox needs of the connection. */
export interface OutboxLink {
  session(): number;
  send(command: StructuralCommand): Promise<Reply<StructuralCommand["op"]>>;
  /** The outbox changed without a call from the page (an answer arrived). */
  changed(): void;
  /** Refused: said to the user once, and the server's document asked for again (if still the same session). */
  refused(message: string, sameSession: boolean): void;
}

export class StructuralOutbox {
  private entries: OutboxEntry[] = [];

  constructor(private readonly link: OutboxLink) {}

  /** Not yet acknowledged, in the order they were made. */
  get commands(): StructuralCommand[] {
    return this.entries.map((e) => e.command);
  }

  /** A new command: sent now when the notebook is open, else on the next open. */
  add(command: StructuralCommand, synced: boolean): void {
    const entry: OutboxEntry = { command, sentIn: 0 };
    this.entries.push(entry);
    if (synced) this.send(entry);
  }

  /** The notebook (re)opened: send what this session has not sent yet. */
  sendAll(): void {
    for (const entry of this.entries) this.send(entry);
  }

  private send(entry: OutboxEntry): void {
    const session = this.link.session();
    if (entry.sentIn === session) return;
    entry.sentIn = session;
    void this.link.send(entry.command).then((ack) => {
      if (ack.ok) {
        this.entries = this.entries.filter((e) => e !== entry);
        this.link.changed();
        return;
      }
      if (isLost(ack)) {
        // Still in the outbox: sent again on the next (re)open.
        if (entry.sentIn === session) entry.sentIn = 0;
        return;
      }
      // Refused (e.g. the cell is gone): drop it and take the server's view again.
      this.entries = this.entries.filter((e) => e !== entry);
      this.link.changed();
      this.link.refused(`${entry.command.op} refused: ${ack.error}`, session === this.link.session());
    });
  }
}
