/** Hang report summaries from both stack formats. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { innermostFrame, summarizeProcess } from "../../server/kernel/stack-summary";

const PYTHON_STACK = `Thread "MainThread" (most recent call last):
  File "<cell [3]>", line 7, in <module>
    train()
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1534, in all_reduce
    work.wait()

Thread "Thread-1" (most recent call last):
  File "/usr/lib/python3.11/threading.py", line 320, in wait
`;

const FAULTHANDLER_STACK = `Thread 0x00007f0000000001 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait

Current thread 0x00007f0000000002 (most recent call first):
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 3145 in barrier
  File "/tmp/rank_main.py", line 12 in main
`;

describe("stack summaries", () => {
  it("takes the innermost frame of the main thread from a Python traceback", () => {
    assert.deepEqual(innermostFrame(PYTHON_STACK), { file: "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line: 1534, func: "all_reduce", code: "work.wait()" });
  });

  it("takes the first frame of the current thread from faulthandler", () => {
    assert.equal(innermostFrame(FAULTHANDLER_STACK)?.func, "barrier");
  });

  it("says a dead rank exited and names where a live one waits", () => {
    assert.equal(summarizeProcess({ label: "rank 0", pid: 1, alive: true, stack: PYTHON_STACK }), "rank 0: in all_reduce (distributed_c10d.py:1534): work.wait()");
    assert.equal(summarizeProcess({ label: "rank 1", pid: 4, alive: true, stack: FAULTHANDLER_STACK }), "rank 1: in barrier (distributed_c10d.py:3145)");
    assert.equal(summarizeProcess({ label: "rank 1", pid: 2, alive: false, stack: "(exited)" }), "rank 1: exited");
    assert.equal(summarizeProcess({ label: "kernel", pid: 3, alive: true, stack: "" }), "kernel: no Python stack");
  });
});
