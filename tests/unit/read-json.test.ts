/**
 * readJson: an HTTP answer's body as JSON, or null for a body that is not
 * JSON (what a proxy's HTML error page or an empty answer reads as).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readJson } from "../../components/shell/model/read-json";

describe("readJson", () => {
  it("reads a JSON body", async () => {
    assert.deepEqual(await readJson(new Response(JSON.stringify({ id: "n1", notes: ["a"] }), { status: 201 })), { id: "n1", notes: ["a"] });
  });

  it("reads a JSON body of a refusal too", async () => {
    assert.deepEqual(await readJson(new Response('{"message":"no"}', { status: 403 })), { message: "no" });
  });

  it("gives null for a body that is not JSON", async () => {
    assert.equal(await readJson(new Response("<html>Bad gateway</html>", { status: 502 })), null);
  });

  it("gives null for an empty body", async () => {
    assert.equal(await readJson(new Response(null, { status: 500 })), null);
  });

  it("passes on a failure to read the body (not a parse error)", async () => {
    const broken = new Response(new ReadableStream({ start: (controller) => controller.error(new RangeError("stream broke")) }));
    await assert.rejects(readJson(broken), RangeError);
  });
});
