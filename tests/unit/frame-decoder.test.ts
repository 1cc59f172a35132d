/** The streaming frame decoder, fuzzed with random split points and random non-frame bytes. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StringDecoder } from "node:string_decoder";
import { FrameDecoder, type DecodedPiece } from "../../server/kernel/frame-decoder";
import { FRAME_END, FRAME_PREFIX } from "../../server/core/protocol/kernel-messages";

const NONCE = "0123456789abcdef0123456789abcdef";
const OTHER_NONCE = "fedcba9876543210fedcba9876543210";

function frame(message: unknown, nonce = NONCE): Buffer {
  // Python's json.dumps(ensure_ascii=True): non-ASCII escaped.
  const json = JSON.stringify(message).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return Buffer.from(`${FRAME_PREFIX}${nonce};${json}${FRAME_END}`, "latin1");
}

/** A deterministic PRNG so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXT_PIECES = ["hello ", "ünïcødé ", "漢字", "🙂", "\r", "\n", "\x1b[31mred\x1b[0m", "\x1b", "\x1b]", "\x1b]mgl", FRAME_PREFIX, `${FRAME_PREFIX}${NONCE.slice(0, 10)}`, "\x07", ";{}", "x".repeat(300)];

function decodeAll(chunks: Buffer[]): { text: string; frames: unknown[]; bad: string[] } {
  const decoder = new FrameDecoder(NONCE);
  const utf8 = new StringDecoder("utf8");
  let text = "";
  const frames: unknown[] = [];
  const bad: string[] = [];
  const take = (pieces: DecodedPiece[]): void => {
    for (const piece of pieces) {
      if (piece.kind === "raw") text += utf8.write(piece.bytes);
      else if (piece.kind === "frame") frames.push(piece.json);
      else bad.push(piece.reason);
    }
  };
  for (const chunk of chunks) take(decoder.push(chunk));
  take(decoder.end());
  text += utf8.end();
  return { text, frames, bad };
}

function splitRandomly(data: Buffer, random: () => number): Buffer[] {
  const chunks: Buffer[] = [];
  let pos = 0;
  while (pos < data.length) {
    const size = random() < 0.3 ? 1 : 1 + Math.floor(random() * 64);
    chunks.push(Buffer.from(data.subarray(pos, pos + size)));
    pos += size;
  }
  return chunks;
}

describe("FrameDecoder", () => {
  it("separates frames from text in one chunk", () => {
    const data = Buffer.concat([Buffer.from("before "), frame({ type: "pong", id: "1" }), Buffer.from(" after")]);
    const out = decodeAll([data]);
    assert.equal(out.text, "before  after");
    assert.deepEqual(out.frames, [{ type: "pong", id: "1" }]);
  });

  it("keeps a frame with another nonce as plain text", () => {
    const forged = frame({ type: "pong", id: "forged" }, OTHER_NONCE);
    const out = decodeAll([Buffer.concat([forged, frame({ type: "pong", id: "real" })])]);
    assert.deepEqual(out.frames, [{ type: "pong", id: "real" }]);
    assert.equal(out.text, forged.toString("latin1"));
  });

  it("reports a frame that is not JSON and carries on", () => {
    const broken = Buffer.from(`${FRAME_PREFIX}${NONCE};{not json${FRAME_END}`, "latin1");
    const out = decodeAll([Buffer.concat([broken, Buffer.from("ok"), frame({ a: 1 })])]);
    assert.equal(out.bad.length, 1);
    assert.equal(out.text, "ok");
    assert.deepEqual(out.frames, [{ a: 1 }]);
  });

  it("drops an oversized frame without holding it in memory", () => {
    const decoder = new FrameDecoder(NONCE, 1024);
    const pieces = [
      ...decoder.push(Buffer.from(`${FRAME_PREFIX}${NONCE};`, "latin1")),
      ...decoder.push(Buffer.alloc(4096, 0x61)),
      ...decoder.push(Buffer.from(`${FRAME_END}tail`, "latin1")),
    ];
    assert.deepEqual(pieces.map((piece) => piece.kind), ["bad-frame", "raw"]);
  });

  it("hands back a partial prefix at the end of the stream as text", () => {
    const out = decodeAll([Buffer.from(`abc${FRAME_PREFIX}${NONCE.slice(0, 5)}`, "latin1")]);
    assert.equal(out.text, `abc${FRAME_PREFIX}${NONCE.slice(0, 5)}`);
    assert.deepEqual(out.frames, []);
  });

  it("rejects a malformed nonce", () => {
    assert.throws(() => new FrameDecoder("not-hex"), /nonce/);
  });

  it("survives 500 random streams split at random byte positions", () => {
    for (let seed = 1; seed <= 500; seed++) {
      const random = prng(seed);
      const parts: Buffer[] = [];
      const expectedFrames: unknown[] = [];
      let expectedText = "";
      const count = 1 + Math.floor(random() * 30);
      for (let i = 0; i < count; i++) {
        if (random() < 0.4) {
          const message = { type: "stream", id: `s${seed}-${i}`, text: TEXT_PIECES[Math.floor(random() * TEXT_PIECES.length)]! };
          expectedFrames.push(message);
          parts.push(frame(message));
        } else if (random() < 0.15) {
          const forged = frame({ forged: i }, OTHER_NONCE);
          expectedText += forged.toString("latin1");
          parts.push(forged);
        } else {
          const text = TEXT_PIECES[Math.floor(random() * TEXT_PIECES.length)]!;
          expectedText += text;
          parts.push(Buffer.from(text, "utf8"));
        }
      }
      const out = decodeAll(splitRandomly(Buffer.concat(parts), random));
      assert.deepEqual(out.frames, expectedFrames, `frames differ for seed ${seed}`);
      assert.equal(out.text, expectedText, `text differs for seed ${seed}`);
      assert.deepEqual(out.bad, [], `bad frames for seed ${seed}`);
    }
  });
});
