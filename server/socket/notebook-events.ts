/**
 * A notebook's events go to its viewers as batches: everything one commit
 * releases (durability-gate.ts releases a group commit's events together, in
 * one synchronous pass) becomes one socket.io packet, `notebook:events`,
 * rather than a packet, a WebSocket frame and a socket write each. A trivial
 * cell's eight events leave in about three packets; a room of sixty viewers
 * gets sixty writes per commit rather than per event.
 *
 * Events are numbered by the notebook's journal, one after another, and a
 * batch says only its first number. A batch is sent at the end of the
 * current microtask run, so it goes out before anything the commit's
 * waiters answer (a joining viewer's snapshot), as single events did.
 */
import type { NotebookEvent } from "../core/protocol/socket-api";

export type SendBatch = (notebookId: string, firstSeq: number, events: NotebookEvent[]) => void;

interface Batch {
  firstSeq: number;
  events: NotebookEvent[];
}

/** A `broadcast(notebookId, event, seq)` for the hub that sends batches through `send`. */
export function batchedBroadcast(send: SendBatch): (notebookId: string, event: NotebookEvent, seq: number) => void {
  const pending = new Map<string, Batch[]>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const batches = [...pending];
    pending.clear();
    for (const [notebookId, list] of batches) for (const batch of list) send(notebookId, batch.firstSeq, batch.events);
  };
  return (notebookId, event, seq) => {
    let list = pending.get(notebookId);
    if (!list) pending.set(notebookId, (list = []));
    const last = list[list.length - 1];
    // Numbers run on within a notebook's journal; a new journal (a runtime opened anew) starts a new batch.
    if (last && last.firstSeq + last.events.length === seq) last.events.push(event);
    else list.push({ firstSeq: seq, events: [event] });
    if (!scheduled) {
      scheduled = true;
      queueMicrotask(flush);
    }
  };
}
