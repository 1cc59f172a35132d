/** Structural commands kept until acknowledged: sent once per session, again after a lost answer, dropped when refused. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StructuralCommand } from "../../components/notebook/model/pending-edits";
import type { Reply } from "../../components/shell/model/socket-rpc";
import { StructuralOutbox } from "../../components/notebook/model/structural-outbox";

type Answer = Reply<StructuralCommand["op"]>;

function setup() {
  let session = 1;
  const sent: string[] = [];
  const answers: Array<(answer: Answer) => void> = [];
  const said: Array<[string, boolean]> = [];
  let changes = 0;
  const outbox = new StructuralOutbox({
    session: () => session,
    send: (command) => {
      sent.push(command.op === "set-kind" ? `${command.op} ${command.kind}` : command.op);
      return new Promise((resolve) => answers.push(resolve));
    },
    changed: () => changes++,
    refused: (message, sameSession) => said.push([message, sameSession]),
  });
  const answer = async (index: number, reply: Answer): Promise<void> => {
    answers[index]?.(reply);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { outbox, sent, said, answer, changes: () => changes, newSession: () => session++ };
}

const kind = (k: "code" | "markdown"): StructuralCommand => ({ op: "set-kind", notebookId: "nb", cellId: "a", kind: k });
const lost: Answer = { ok: false, error: "no answer", code: "unavailable", lost: true };

describe("StructuralOutbox", () => {
  it("keeps a command until it is acknowledged, and sends it while closed only on the next open", async () => {
    const { outbox, sent, answer, changes } = setup();
    outbox.add(kind("markdown"), false);
    assert.deepEqual(sent, []);
    outbox.sendAll();
    outbox.sendAll();
    assert.deepEqual(sent, ["set-kind markdown"], "once per session");
    assert.equal(outbox.commands.length, 1);
    await answer(0, { ok: true });
    assert.deepEqual(outbox.commands, []);
    assert.equal(changes(), 1);
  });

  it("sends a command again in the next session when its answer was lost", async () => {
    const { outbox, sent, answer, newSession } = setup();
    outbox.add(kind("code"), true);
    await answer(0, lost);
    assert.equal(outbox.commands.length, 1);
    outbox.sendAll();
    assert.deepEqual(sent, ["set-kind code", "set-kind code"], "a lost send counts as not sent");
    newSession();
    outbox.sendAll();
    assert.equal(sent.length, 3);
  });

  it("drops a refused command and says so, asking for the server's document only in the same session", async () => {
    const { outbox, said, answer, newSession } = setup();
    outbox.add(kind("code"), true);
    outbox.add(kind("markdown"), true);
    await answer(0, { ok: false, error: "no such cell", code: "not-found" });
    newSession();
    await answer(1, { ok: false, error: "no such cell", code: "not-found" });
    assert.deepEqual(outbox.commands, []);
    assert.deepEqual(said, [
      ["set-kind refused: no such cell", true],
      ["set-kind refused: no such cell", false],
    ]);
  });
});
