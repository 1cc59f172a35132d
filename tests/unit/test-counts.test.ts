/**
 * `npm test`'s summary counts every test that did not pass, however its runner names it: node's "fail" and
 * "cancelled" (a test that times out is cancelled, with the tests of its suite after it: three interrupt tests
 * that timed out once read "1 failed"), pytest's "failed" and "error". Real runs of both runners on fixtures.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";

const dir = mkdtempSync(join(tmpdir(), "mgpulab-counts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function counts(fn: "count_node_log" | "count_pytest_log", log: string): [number, number] {
  const file = join(dir, `${fn}.log`);
  writeFileSync(file, log);
  const out = execFileSync("bash", ["-c", `source scripts/test-counts.sh; ${fn} "$1"`, "counts", file], { encoding: "utf8" });
  const [passed, failed] = out.trim().split(" ").map(Number);
  return [passed!, failed!];
}

describe("the test summary's counts", () => {
  it("counts node's failed and cancelled tests, a timed-out one among them", { timeout: 60_000 }, () => {
    const fixture = join(dir, "fixture.test.mjs");
    writeFileSync(
      fixture,
      [
        'import { describe, it } from "node:test";',
        'import assert from "node:assert";',
        'describe("fine", () => { it("passes", () => {}); it("fails", () => assert.equal(1, 2)); });',
        'describe("slow", () => {',
        '  it("times out", { timeout: 200 }, () => new Promise(() => {}));',
        '  it("after it", () => {});',
        "});",
      ].join("\n"),
    );
    // NODE_TEST_CONTEXT would make the inner run report to this one instead of printing its summary
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const run = spawnSync(process.execPath, ["--test", "--test-reporter=spec", fixture], { encoding: "utf8", env });
    const log = run.stdout + run.stderr;
    const total = Number(/^ℹ tests (\d+)/m.exec(log)?.[1]);
    const passedByNode = Number(/^ℹ pass (\d+)/m.exec(log)?.[1]);
    const [passed, failed] = counts("count_node_log", log);
    assert.equal(passed, passedByNode);
    assert.equal(failed, total - passedByNode, `every test that did not pass is counted:\n${log.split("\n").filter((l) => l.startsWith("ℹ")).join("\n")}`);
    assert.ok(failed >= 2, "the failure and the timeout at least");
  });

  it("counts pytest's failures and errors", { timeout: 60_000 }, () => {
    const fixture = join(dir, "test_fixture.py");
    writeFileSync(
      fixture,
      ["import pytest", "@pytest.fixture", "def broken():", "    raise RuntimeError('setup')",
        "def test_passes(): pass", "def test_fails(): assert 1 == 2", "def test_errors(broken): pass", ""].join("\n"),
    );
    const run = spawnSync("bash", ["scripts/python.sh", "-m", "pytest", "-q", "-p", "no:cacheprovider", fixture], { encoding: "utf8" });
    assert.deepEqual(counts("count_pytest_log", run.stdout + run.stderr), [1, 2]);
  });
});
