/** The TypeScript side of the kernel protocol accepts every pinned fixture (Python checks the same file). */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { FrameDecoder } from "../../server/kernel/frame-decoder";
import { kernelMessageSchema, kernelRequestSchema, type KernelMessageType } from "../../server/core/protocol/kernel-messages";

interface Fixtures {
  nonce: string;
  kernelMessages: unknown[];
  kernelRequests: unknown[];
  encodedFrames: Array<{ message: unknown; frame: string }>;
}
const fixtures = JSON.parse(readFileSync(path.join(__dirname, "../../kernels/protocol/fixtures.json"), "utf8")) as Fixtures;

describe("kernel protocol fixtures", () => {
  it("parses every kernel message and covers every message type", () => {
    const seen = new Set<KernelMessageType>();
    for (const message of fixtures.kernelMessages) seen.add(kernelMessageSchema.parse(message).type);
    const allTypes = kernelMessageSchema.options.map((option) => option.shape.type.value);
    assert.deepEqual([...seen].sort(), [...allTypes].sort());
  });

  it("parses every request", () => {
    for (const request of fixtures.kernelRequests) kernelRequestSchema.parse(request);
  });

  it("decodes the frames Python encodes", () => {
    const decoder = new FrameDecoder(fixtures.nonce);
    for (const { message, frame } of fixtures.encodedFrames) {
      const pieces = decoder.push(Buffer.from(frame, "latin1"));
      assert.deepEqual(pieces, [{ kind: "frame", json: message }]);
    }
  });

  it("rejects a message with a wrong field type", () => {
    assert.equal(kernelMessageSchema.safeParse({ type: "status", id: "x", state: "sleeping" }).success, false);
    assert.equal(kernelMessageSchema.safeParse({ type: "metric", rank: -1, step: 0, values: {} }).success, false);
  });

  it("refuses at the channel a metric the database would refuse, so one bad frame never spoils a stored batch", () => {
    const ok = { type: "metric", runId: "DDP x4", rank: 1, step: 7, values: { loss: 0.5, "phase/fwd_ms": null } };
    assert.equal(kernelMessageSchema.safeParse(ok).success, true);
    for (const bad of [
      { ...ok, runId: "x".repeat(65) },
      { ...ok, step: 2 ** 31 },
      { ...ok, values: { "1loss": 1 } },
      { ...ok, values: { "loss; drop table": 1 } },
      { ...ok, values: { ["n".repeat(65)]: 1 } },
    ]) {
      assert.equal(kernelMessageSchema.safeParse(bad).success, false, JSON.stringify(bad).slice(0, 120));
    }
  });
});
