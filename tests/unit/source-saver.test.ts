/**
 * Typed text on its way to the server: debounced and coalesced per cell, one
 * send in flight per cell, a conflict waits for the user, our own lost write
 * is not a conflict, and a run waits for its cells' text to be saved.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NotebookSend } from "../../server/core/protocol/ops-notebook";
import type { Reply } from "../../components/shell/model/socket-rpc";
import { SourceSaver } from "../../components/notebook/model/source-saver";

type Sent = { command: NotebookSend<"set-source">; answer: (reply: Reply<"set-source">) => Promise<void> };

function setup(synced = true) {
  const sent: Sent[] = [];
  const conflicts: string[] = [];
  let session = 1;
  const saver = new SourceSaver(
    {
      notebookId: "nb",
      synced: () => synced,
      session: () => session,
      send: (command) =>
        new Promise((resolve) => {
          sent.push({
            command,
            answer: async (reply) => {
              resolve(reply);
              await new Promise((settled) => setImmediate(settled));
            },
          });
        }),
      conflict: (cellId, theirs) => conflicts.push(`${cellId}: ${theirs}`),
      changed: () => undefined,
      error: (message) => assert.fail(message),
    },
    { drafts: null, debounceMs: 60_000, saveWaitMs: 60_000 },
  );
  return { saver, sent, conflicts, newSession: () => session++ };
}

const edit = (saver: SourceSaver, cellId: string, source: string): void => saver.edit(cellId, source, "code", 0, "base");
const conflict = (theirSource: string): Reply<"set-source"> => ({ ok: false, error: "changed elsewhere", code: "conflict", conflict: { cellId: "a", theirSource } });

describe("SourceSaver", () => {
  it("sends the latest text of a cell once on flush, one send in flight, and the newer text after its answer", async () => {
    const { saver, sent } = setup();
    edit(saver, "a", "x");
    edit(saver, "a", "xy");
    saver.flush();
    saver.flush();
    assert.deepEqual(sent.map((s) => s.command.source), ["xy"]);
    edit(saver, "a", "xyz");
    saver.flush();
    assert.equal(sent.length, 1, "still in flight");
    await sent[0]?.answer({ ok: true });
    saver.flush();
    assert.deepEqual(sent.map((s) => s.command.source), ["xy", "xyz"]);
    await sent[1]?.answer({ ok: true });
    assert.deepEqual(saver.pendingEdits, {});
    saver.stop();
  });

  it("saves the cell left behind when typing moves to another cell", () => {
    const { saver, sent } = setup();
    edit(saver, "a", "x");
    edit(saver, "b", "y");
    assert.deepEqual(sent.map((s) => s.command.cellId), ["a"]);
    saver.stop();
  });

  it("holds a conflicting edit for the user's choice; keep-mine sends it again, over their text", async () => {
    const { saver, sent, conflicts } = setup();
    edit(saver, "a", "mine");
    saver.flush();
    await sent[0]?.answer(conflict("theirs"));
    assert.deepEqual(conflicts, ["a: theirs"]);
    assert.deepEqual(Object.keys(saver.conflicts), ["a"]);
    saver.flush();
    assert.equal(sent.length, 1, "not sent again until the user chooses");
    saver.resolveConflict("a", "keep-mine");
    assert.equal(sent[1]?.command.source, "mine");
    assert.deepEqual(saver.conflicts, {});
    saver.stop();
  });

  it("takes a 'conflict' with a text this page sent itself (its answer was lost) as our own write", async () => {
    const { saver, sent, conflicts, newSession } = setup();
    edit(saver, "a", "first");
    saver.flush();
    newSession();
    saver.newSession();
    edit(saver, "a", "second");
    saver.flush();
    await sent[1]?.answer(conflict("first"));
    assert.deepEqual(conflicts, []);
    assert.equal(sent[2]?.command.source, "second");
    saver.stop();
  });

  it("takes a 'conflict' with the text the server just said it saved as our own write (its event not here yet)", async () => {
    // The answer can arrive before the server's cell-source event (it is held until its commit, and with
    // several servers it travels through Redis): the next edit is then typed on the page's older copy.
    const { saver, sent, conflicts } = setup();
    edit(saver, "a", "r119");
    saver.flush();
    await sent[0]?.answer({ ok: true });
    edit(saver, "a", "r120");
    saver.flush();
    await sent[1]?.answer(conflict("r119"));
    assert.deepEqual(conflicts, []);
    assert.equal(sent[2]?.command.source, "r120");
    // Another tab's text is still a conflict.
    await sent[2]?.answer(conflict("theirs"));
    assert.deepEqual(conflicts, ["a: theirs"]);
    saver.stop();
  });

  it("lets a run go once its cells are saved, and says why not when a cell is in conflict", async () => {
    const { saver, sent } = setup();
    assert.equal(await saver.whenSaved(["a"]), null);
    edit(saver, "a", "x");
    saver.flush();
    const waiting = saver.whenSaved(["a"]);
    await sent[0]?.answer({ ok: true });
    assert.equal(await waiting, null);
    edit(saver, "a", "y");
    saver.flush();
    const refused = saver.whenSaved(["a"]);
    await sent[1]?.answer(conflict("z"));
    assert.equal((await refused)?.code, "conflict");
    saver.cellDeleted("a");
    assert.deepEqual([saver.conflicts, saver.pendingEdits], [{}, {}]);
    saver.stop();
  });

  it("sends nothing while the notebook is not open", () => {
    const { saver, sent } = setup(false);
    edit(saver, "a", "x");
    saver.flush();
    assert.deepEqual(sent, []);
    saver.stop();
  });
});
