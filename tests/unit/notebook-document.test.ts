/**
 * A stored notebook as the runtime's document, and the bounds of a stored
 * kernel spec (server/persistence/notebook-document.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidDataError } from "../../server/persistence/errors";
import { checkKernelSpec, toNotebookDocument } from "../../server/persistence/notebook-document";
import type { StoredNotebook } from "../../server/persistence/types";

const STORED: StoredNotebook = {
  id: "n1",
  title: "DDP basics",
  ownerId: "local",
  version: 3,
  lastSeq: 0,
  createdAt: new Date(0),
  updatedAt: new Date(0),
  deletedAt: null,
  kernelSpec: { hostId: null, gpus: 2 },
  cells: [],
};

describe("toNotebookDocument", () => {
  it("gives a spec without a host the lab's default, the kernel not started, predictions by question", () => {
    const doc = toNotebookDocument(STORED, [{ userId: "local", questionId: "q1", question: "Faster?", choice: "yes", afterRun: false, committedAt: new Date(1000) }], "gpu-1");
    assert.deepEqual(doc.kernelSpec, { hostId: "gpu-1", gpus: 2 });
    assert.deepEqual(doc.kernel, { state: "not-started" });
    assert.equal(doc.deleted, false);
    assert.deepEqual(doc.predictions, { q1: { questionId: "q1", choice: "yes", afterRun: false, committedAt: new Date(1000).toISOString() } });
  });

  it("keeps a named host and says a deleted notebook is deleted", () => {
    const doc = toNotebookDocument({ ...STORED, deletedAt: new Date(0), kernelSpec: { hostId: "local", gpus: 0 } });
    assert.deepEqual(doc.kernelSpec, { hostId: "local", gpus: 0 });
    assert.equal(doc.deleted, true);
  });
});

describe("checkKernelSpec", () => {
  it("takes a host id of letters, digits, - and _ and 0 to 1024 GPUs", () => {
    assert.deepEqual(checkKernelSpec({ hostId: "gpu_1-a", gpus: 1024 }), { hostId: "gpu_1-a", gpus: 1024 });
    assert.deepEqual(checkKernelSpec({ hostId: null, gpus: 0 }), { hostId: null, gpus: 0 });
  });

  it("refuses anything else, saying what", () => {
    assert.throws(() => checkKernelSpec({ hostId: "a b", gpus: 0 }), (error: unknown) => error instanceof InvalidDataError && /"a b" is not a host id/.test(error.message));
    assert.throws(() => checkKernelSpec({ hostId: null, gpus: 1025 }), (error: unknown) => error instanceof InvalidDataError && /0 to 1024 GPUs, not 1025/.test(error.message));
    assert.throws(() => checkKernelSpec({ hostId: null, gpus: 1.5 }), InvalidDataError);
  });
});
