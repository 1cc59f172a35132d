/** The output budget: head kept whole, tail kept last, every character accounted for. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OutputRecorder } from "../../server/notebook/output-recorder";

const streamText = (recorder: OutputRecorder) =>
  recorder.outputs().map((output) => (output.kind === "stream" ? output.text : output.kind === "elided" ? `[${output.elidedBytes}]` : `<${output.kind}>`)).join("");

describe("OutputRecorder", () => {
  it("merges consecutive writes of one stream and keeps stderr apart", () => {
    const recorder = new OutputRecorder({ headChars: 100, tailChars: 10 });
    recorder.stream("stdout", "a");
    recorder.stream("stdout", "b");
    recorder.stream("stderr", "c");
    assert.deepEqual(recorder.outputs(), [
      { kind: "stream", name: "stdout", text: "ab" },
      { kind: "stream", name: "stderr", text: "c" },
    ]);
  });

  it("keeps the head, the last tailChars, and counts what it dropped", () => {
    const recorder = new OutputRecorder({ headChars: 5, tailChars: 4 });
    const changes = recorder.stream("stdout", "0123456789abcdef");
    assert.deepEqual(changes, [{ kind: "append", name: "stdout", text: "01234" }, { kind: "tail" }]);
    assert.equal(streamText(recorder), "01234[7]cdef");
    recorder.stream("stderr", "XY");
    assert.equal(streamText(recorder), "01234[9]efXY");
    assert.deepEqual(recorder.tailSegments(), [{ name: "stdout", text: "ef" }, { name: "stderr", text: "XY" }]);
  });

  it("never drops a rich output, even while overflowing, and keeps it in order", () => {
    const recorder = new OutputRecorder({ headChars: 2, tailChars: 2 });
    recorder.stream("stdout", "abcdef");
    recorder.output({ kind: "error", ename: "E", evalue: "v", traceback: [] });
    recorder.stream("stdout", "ghij");
    assert.equal(streamText(recorder), "ab[2]ef<error>[2]ij");
  });

  it("does not split a surrogate pair at the head boundary", () => {
    const recorder = new OutputRecorder({ headChars: 3, tailChars: 10 });
    recorder.stream("stdout", "ab🙂cd");
    const head = recorder.outputs()[0];
    assert.equal(head?.kind === "stream" && head.text, "ab");
  });
});
