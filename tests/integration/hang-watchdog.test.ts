/** The server's watchdog: a busy cell without progress gets every process's stack, and stays interruptible. */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TestKernel } from "../helpers/test-kernel";

const LIMIT = { timeout: 60_000 };

describe("hang watchdog", () => {
  let kernel: TestKernel;
  before(async () => {
    kernel = await TestKernel.start({ hangAfterMs: 800 });
  });
  after(async () => {
    await kernel.close();
  });

  it("reports where a silent cell and the child it waits for are stuck, then interrupts", LIMIT, async () => {
    const cell = kernel.submit(
      [
        "import os, subprocess, sys, tempfile",
        "from mgpulab_kernel import diagnostics",
        "stack_file = tempfile.mktemp(suffix='.stacks')",
        "child_code = 'import faulthandler, signal, sys, threading\\n' \\",
        "    'faulthandler.register(signal.SIGQUIT, file=open(sys.argv[1], \"a\"), all_threads=True)\\n' \\",
        "    'def wait_for_peer():\\n    threading.Event().wait()\\n' \\",
        "    'print(\"child ready\", flush=True)\\nwait_for_peer()\\n'",
        "child = subprocess.Popen([sys.executable, '-c', child_code, stack_file], stdout=subprocess.PIPE, text=True)",
        "assert child.stdout.readline() == 'child ready\\n'",
        "diagnostics.register_process(child.pid, 'rank 1', stack_file)",
        "def waiting_for_rank():",
        "    child.wait()",
        "print('waiting', flush=True)",
        "waiting_for_rank()",
      ].join("\n"),
    );
    const report = await cell.hang;
    kernel.session.interrupt(); // before any assertion, so a failure cannot leave the cell hanging
    assert.equal(report.answeredBy, "kernel");
    assert.ok(report.idleMs >= 800);
    assert.deepEqual(report.processes.map((process) => process.label), ["kernel", "rank 1"]);
    assert.match(report.summary[0]!, /^kernel: in (_try_wait|wait)/);
    assert.match(report.processes[0]!.stack, /waiting_for_rank/);
    assert.doesNotMatch(report.processes[0]!.stack, /mgpulab_kernel|_boot/, "the kernel's own frames are left out");
    assert.match(report.summary[1]!, /^rank 1: in (wait|wait_for_peer)/);
    assert.match(report.processes[1]!.stack, /wait_for_peer/);

    const result = await cell.done;
    assert.equal(result.status, "interrupted");
    assert.equal((await kernel.run("'responsive'")).result, "'responsive'");
  });

  it("does not fire while a cell keeps making progress", LIMIT, async () => {
    const cell = kernel.submit("import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.1)");
    let reported = false;
    void cell.hang.then(() => {
      reported = true;
    });
    const result = await cell.done;
    assert.equal(result.status, "ok");
    assert.equal(reported, false);
  });
});
