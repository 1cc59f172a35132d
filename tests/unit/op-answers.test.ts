/**
 * The op tables read answers off the wire as each op declares them: what the
 * browser's send(op) and a forwarding lab server resolve with. A reply
 * without its op's fields is a refusal that says which, a refusal passes as
 * sent, and the page's access rules are the ones the server enforces.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LAB_OPS, labAnswerOf } from "../../server/core/protocol/ops-lab";
import { driverAnswerOf, isNotebookOp, NOTEBOOK_OPS, notebookAnswerOf } from "../../server/core/protocol/ops-notebook";
import { labNeedOf, mayDo, needOf } from "../../components/notebook/model/notebook-access";

const journal = { epoch: "e1", seq: 3 };

describe("answers read by their op", () => {
  it("passes a reply that has its op's fields, and only those", () => {
    const hosts = [{ id: "gpu1" }];
    assert.deepEqual(labAnswerOf("list-hosts", { ok: true, hosts, stray: 1 }), { ok: true, hosts });
    assert.deepEqual(labAnswerOf("restart-kernel", { ok: true }), { ok: true });
    assert.deepEqual(labAnswerOf("find-scenario-copy", { ok: true, freshTitle: "DP (2)" }), { ok: true, freshTitle: "DP (2)" });
  });

  it("turns a reply without its op's fields into a refusal naming them", () => {
    assert.deepEqual(labAnswerOf("list-hosts", { ok: true }), { ok: false, code: "internal", error: "the server sent no valid hosts in its answer to list-hosts" });
    assert.deepEqual(labAnswerOf("whoami", { ok: true, me: "Ada" }), { ok: false, code: "internal", error: "the server sent no valid me in its answer to whoami" });
    assert.deepEqual(notebookAnswerOf("complete", { ok: true, inspection: {} }), { ok: false, code: "internal", error: "the server sent no valid completion in its answer to complete" });
    assert.equal(labAnswerOf("list-users", "yes").ok, false);
    assert.equal(labAnswerOf("list-users", null).ok, false);
  });

  it("passes a refusal as sent, a source conflict included", () => {
    assert.deepEqual(labAnswerOf("list-users", { ok: false, error: "a member may not manage users", code: "forbidden" }), { ok: false, error: "a member may not manage users", code: "forbidden" });
    const conflict = { ok: false, error: "changed in another tab", code: "conflict", conflict: { cellId: "c1", theirSource: "x = 2" } };
    assert.deepEqual(notebookAnswerOf("set-source", conflict), conflict);
    assert.equal(labAnswerOf("list-users", { ok: false, error: "?", code: "no-such-code" }).ok, false);
  });

  it("answers open with the viewer's access, \"edit\" from a server that says none; a driver's open has no access", () => {
    assert.deepEqual(notebookAnswerOf("open", { ok: true, missed: [], journal, access: "read" }), { ok: true, missed: [], journal, access: "read" });
    assert.deepEqual(notebookAnswerOf("open", { ok: true, missed: [], journal }), { ok: true, missed: [], journal, access: "edit" });
    assert.deepEqual(driverAnswerOf("open", { ok: true, missed: [], journal, access: "read" }), { ok: true, missed: [], journal });
    assert.equal(driverAnswerOf("open", { ok: true, missed: [] }).ok, false);
  });
});

describe("the page's access rules are the table's", () => {
  it("offers each notebook op to exactly the levels its need admits", () => {
    for (const op of Object.keys(NOTEBOOK_OPS).filter(isNotebookOp)) {
      const need = NOTEBOOK_OPS[op].access;
      assert.equal(needOf(op), need);
      assert.deepEqual(
        (["read", "run", "edit"] as const).map((level) => mayDo(level, need)),
        need === "read" ? [true, true, true] : need === "run" ? [false, true, true] : [false, false, true],
        op,
      );
    }
  });

  it("asks of the notebook what a lab op's rule asks, and nothing of one not about a notebook", () => {
    assert.equal(labNeedOf("rename-notebook"), "manage");
    assert.equal(labNeedOf("restart-kernel"), "run");
    assert.equal(labNeedOf("list-hosts"), null);
    assert.deepEqual(LAB_OPS["rename-notebook"].access, { kind: "notebook", action: "manage" });
  });
});
