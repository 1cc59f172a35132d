/**
 * One logger type (server/logger.ts): every part of the server reports
 * through a `Log` (level, sentence, optional fields), and the pino instance
 * behind it writes the same JSON line a direct pino call would.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import pino from "pino";
import { logTo } from "../../server/logger";

function capture(): { lines: Array<Record<string, unknown>>; logger: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: "info", base: undefined, timestamp: false }, sink) };
}

describe("logTo", () => {
  it("writes each level as pino does, with the fields on the line and an err with its stack", () => {
    const { lines, logger } = capture();
    const log = logTo(logger);
    log("info", "listening", { url: "http://127.0.0.1:1" });
    log("warning", "request refused", { reason: "origin" });
    log("error", "a route failed", { err: new Error("boom") });
    log("info", "no fields");
    assert.deepEqual(lines.slice(0, 2), [
      { level: 30, url: "http://127.0.0.1:1", msg: "listening" },
      { level: 40, reason: "origin", msg: "request refused" },
    ]);
    const failed = lines[2]!;
    assert.equal(failed.level, 50);
    assert.equal(failed.msg, "a route failed");
    assert.match(JSON.stringify(failed.err), /boom.*at /s, "the error's stack is on the line");
    assert.deepEqual(lines[3], { level: 30, msg: "no fields" });
  });

  it("is the only logger shape: no module declares its own (level, message) function type", () => {
    const shape = /\(level: "info" \| "warning" \| "error", message: string\) => void/;
    const root = path.resolve(__dirname, "..", "..");
    const found: string[] = [];
    for (const entry of readdirSync(path.join(root, "server"), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
      const file = path.relative(root, path.join(entry.parentPath, entry.name));
      if (shape.test(readFileSync(path.join(root, file), "utf8"))) found.push(file);
    }
    assert.deepEqual(found, [], "take a Log (server/logger.ts)");
  });
});
