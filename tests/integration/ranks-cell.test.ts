/** `%%ranks N` cells: code on N gloo ranks outside the kernel, output per rank, hangs diagnosed and ended. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TestKernel } from "../helpers/test-kernel";

const LIMIT = { timeout: 120_000 };

describe("%%ranks cells", () => {
  let kernel: TestKernel;
  before(async () => {
    kernel = await TestKernel.start();
  });
  after(async () => {
    await kernel.close();
  });

  it("runs the cell on every rank with an initialised process group, labelled by rank", LIMIT, async () => {
    const result = await kernel.run(
      "%%ranks 2\nimport torch, torch.distributed as dist\nt = torch.ones(1) * (dist.get_rank() + 1)\ndist.all_reduce(t)\nprint('sum', t.item())",
    );
    assert.equal(result.status, "ok", result.console + result.stderr);
    const text = result.console + result.stderr;
    assert.match(text, /\[rank 0\] sum 3\.0/);
    assert.match(text, /\[rank 1\] sum 3\.0/);
    assert.match(text, /\[ranks\] ok/);
  });

  it("diagnoses a rank that skips a collective, shows where each rank was, and ends the run", LIMIT, async () => {
    const result = await kernel.run(
      "%%ranks 2 --hang 3 --timeout 60\nimport torch, torch.distributed as dist\nif dist.get_rank() == 0:\n    dist.all_reduce(torch.ones(1))\nelse:\n    import time\n    time.sleep(600)",
    );
    assert.equal(result.status, "error");
    assert.equal(result.error?.ename, "RanksFailed");
    assert.match(result.error!.evalue, /rank 0 in all_reduce/);
    assert.match(result.error!.evalue, /rank 1 in <module> \(rank_code\.py:7\)/, "line 7 of the cell: the sleep");
    assert.equal((await kernel.run("'kernel still fine'")).result, "'kernel still fine'");
  });

  it("keeps the cell's line numbers in a rank's traceback", LIMIT, async () => {
    const result = await kernel.run("%%ranks 2 --no-init\nx = 1\nraise ValueError('line three')");
    assert.equal(result.status, "error");
    assert.match(result.console + result.stderr, /line 3/);
  });

  it("explains a malformed magic line", LIMIT, async () => {
    const result = await kernel.run("%%ranks many\nprint(1)");
    assert.equal(result.error?.ename, "MagicError");
    assert.match(result.error!.evalue, /Usage: %%ranks N/);
  });
});
