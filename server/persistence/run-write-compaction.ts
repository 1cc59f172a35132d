/**
 * One group commit's writes with what a later write of the same batch makes
 * redundant taken out, before they become statements (group-commit.ts).
 *
 * The runtime hands over a cell's whole life at once when it ends within a
 * commit: a trivial cell was 11 statements (queued, marked running, the cell
 * pointed at it, heard from, the read position twice, ...), 6 of which
 * rewrote a row the same transaction writes again. What is stored is the same
 * either way; only the number of statements changes. The result depends on
 * the batch alone, so a retried commit (its stored writes counted by index)
 * sees the same list.
 *
 * - A queued execution that starts in the same batch is inserted once, as
 *   running, with the time it was queued.
 * - An execution that finishes in the same batch needs neither the cell
 *   pointed at it when it starts (the finish points the cell at it) nor when
 *   it was last heard from (that time matters only to a run that ends without
 *   it finishing: run-endings.ts).
 * - Of a run's read positions, the last one is stored: the transaction stores
 *   everything before it too.
 */
import type { RunWrite } from "./run-writes";

export function compactRunWrites(writes: readonly RunWrite[]): RunWrite[] {
  if (writes.length < 2) return [...writes];
  const queuedAt = new Map<string, Date>();
  const startedHere = new Set<string>();
  const finishedHere = new Set<string>();
  const lastPosition = new Map<string, number>();
  for (const [index, write] of writes.entries()) {
    if (write.kind === "execution-queued") queuedAt.set(write.executionId, write.at);
    else if (write.kind === "execution-started" && write.queued === true && queuedAt.has(write.executionId)) startedHere.add(write.executionId);
    else if (write.kind === "execution-finished") finishedHere.add(write.executionId);
    else if (write.kind === "read-position") lastPosition.set(write.runId, index);
  }
  const compacted: RunWrite[] = [];
  for (const [index, write] of writes.entries()) {
    switch (write.kind) {
      case "execution-queued":
        if (!startedHere.has(write.executionId)) compacted.push(write);
        break;
      case "execution-started": {
        const merged = startedHere.has(write.executionId);
        const pointsCell = !finishedHere.has(write.executionId);
        if (!merged && pointsCell) compacted.push(write);
        else compacted.push({ ...write, ...(merged ? { queued: false, queuedAt: queuedAt.get(write.executionId) } : {}), ...(pointsCell ? {} : { pointsCell: false }) });
        break;
      }
      case "execution-progress": {
        if (write.heardAt === undefined || !finishedHere.has(write.executionId)) {
          compacted.push(write);
          break;
        }
        const { heardAt: _unneeded, ...rest } = write;
        if (rest.outputs.length > 0 || rest.liveTail !== undefined) compacted.push(rest);
        break;
      }
      case "read-position":
        if (lastPosition.get(write.runId) === index) compacted.push(write);
        break;
      default:
        compacted.push(write);
    }
  }
  return compacted;
}
