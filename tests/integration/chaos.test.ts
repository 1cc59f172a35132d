/**
 * The chaos run in its short form: `npm run chaos` for two
 * minutes with a fixed seed (one fault of each kind on the several-servers
 * lab, 20 participants), which must find no violation; with the checker's
 * self-test, so the same run also shows that the checker catches a planted
 * one (a stored output line a page showed, deleted after the real check).
 * The long form and its figures are in RELIABILITY.md.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { FAULT_KINDS } from "../chaos/schedule";

const ROOT = path.resolve(__dirname, "..", "..");
const SEED = 20261127;
/** Two minutes of faults, plus starting the lab, the class joining, settling, checking and stopping on a loaded machine. */
const LIMIT_MS = 25 * 60_000;

interface Report {
  faults: Array<{ kind: string; error: string | null }>;
  figures: { executions: number; linesSeen: number; executes: { ok: number } } | null;
  violations: Array<{ check: string; what: string }>;
  notes: string[];
  selfTest: string | null;
}

describe("npm run chaos, short form", () => {
  it(`two minutes of faults (seed ${SEED}): no violation, and the checker catches a planted one`, { timeout: LIMIT_MS }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-chaos-test-"));
    const json = path.join(dir, "report.json");
    try {
      const child = spawn("npm", ["run", "--silent", "chaos", "--", "--minutes", "2", "--seed", String(SEED), "--no-build", "--plant-violation", "--json", json], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
      const report = JSON.parse(readFileSync(json, "utf8")) as Report;
      assert.deepEqual(report.violations, [], output.slice(-6000));
      assert.equal(code, 0, output.slice(-6000));
      assert.match(report.selfTest ?? "", /^caught: deleted "P\d{2} r\d{3} /, "the checker names the line deleted after the real check");
      for (const kind of FAULT_KINDS) assert.ok(report.faults.some((fault) => fault.kind === kind && fault.error === null), `a ${kind} was done: ${JSON.stringify(report.faults)}`);
      assert.ok(report.figures && report.figures.executes.ok > 0 && report.figures.linesSeen > 0, JSON.stringify(report.figures));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
