/** The kernel over a real PTY with real python3: execution, streams, interrupt, restart, crashes. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { TestKernel } from "../helpers/test-kernel";

const LIMIT = { timeout: 60_000 };

describe("kernel execution", () => {
  let kernel: TestKernel;
  before(async () => {
    kernel = await TestKernel.start();
  });
  after(async () => {
    await kernel.close();
  });

  it("shows the value of the last expression and keeps the namespace", LIMIT, async () => {
    await kernel.run("x = 40");
    const result = await kernel.run("y = x + 1\ny + 1");
    assert.equal(result.status, "ok");
    assert.equal(result.result, "42");
  });

  it("counts executions like Jupyter, errors included", LIMIT, async () => {
    const first = await kernel.run("1");
    const failing = await kernel.run("1/0");
    const third = await kernel.run("2");
    assert.equal(failing.executionCount, first.executionCount! + 1);
    assert.equal(third.executionCount, first.executionCount! + 2);
  });

  it("shows no value for a statement or for None", LIMIT, async () => {
    assert.equal((await kernel.run("z = 3")).result, undefined);
    assert.equal((await kernel.run("None")).result, undefined);
  });

  it("keeps print, stderr and a child process's output in order", LIMIT, async () => {
    const result = await kernel.run(
      [
        "import subprocess, sys",
        "print('one')",
        "print('two', file=sys.stderr)",
        "subprocess.run(['echo', 'three'])",
        "print('four')",
        "import os; os.write(1, b'five\\n')",
      ].join("\n"),
    );
    const sequence = result.events.map((event) =>
      event.kind === "console" ? event.text : event.message.type === "stream" ? `[${event.message.name}]${event.message.text}` : "",
    ).join("");
    assert.equal(sequence, "one\n[stderr]two\nthree\nfour\nfive\n");
  });

  it("reports a traceback that points at the cell's own lines, without kernel frames", LIMIT, async () => {
    const result = await kernel.run("def f():\n    return 1 / 0\n\nf()");
    assert.equal(result.status, "error");
    assert.equal(result.error?.ename, "ZeroDivisionError");
    const text = result.error!.traceback.join("\n");
    assert.match(text, /<cell \[\d+\]>", line 4, in <module>/);
    assert.match(text, /line 2, in f\n\s+return 1 \/ 0/);
    assert.doesNotMatch(text, /mgpulab_kernel/);
  });

  it("reports a syntax error with its line and nothing of the kernel", LIMIT, async () => {
    const result = await kernel.run("x = 1\nif True\n  pass");
    assert.equal(result.error?.ename, "SyntaxError");
    assert.match(result.error!.traceback.join("\n"), /<cell \[\d+\]>", line 2\n\s+if True/);
    assert.doesNotMatch(result.error!.traceback.join("\n"), /ast\.py|mgpulab_kernel/);
  });

  it("keeps chained exceptions, each with the cell's frames", LIMIT, async () => {
    const result = await kernel.run("try:\n    {}['k']\nexcept KeyError as e:\n    raise ValueError('bad config') from e");
    const text = result.error!.traceback.join("\n");
    assert.match(text, /KeyError: 'k'\n\nThe above exception was the direct cause of the following exception:/);
    assert.match(text, /line 4, in <module>\n\s+raise ValueError/);
    assert.doesNotMatch(text, /mgpulab_kernel/);
  });

  it("round-trips a 20 KB single line of code and of output intact", LIMIT, async () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 éß漢字🙂";
    const chars = Array.from(alphabet);
    let text = "";
    while (text.length < 20_000) text += chars[(text.length * 7919) % chars.length];
    const result = await kernel.run(`s = ${JSON.stringify(text)}\nprint(s)\nlen(s)`);
    assert.equal(result.status, "ok");
    assert.equal(result.console, `${text}\n`);
    assert.equal(Number(result.result), Array.from(text).length);
  });

  it("treats a frame with a wrong nonce as plain text", LIMIT, async () => {
    const forged = '\\x1b]mgl;' + "0".repeat(32) + ';{"type": "execute_reply", "id": "x", "count": 1, "status": "ok", "durationMs": 1}\\x07';
    const result = await kernel.run(`print('${forged}')\nprint('after')`);
    assert.equal(result.status, "ok");
    assert.match(result.console, /\x1b\]mgl;0{32};\{"type": "execute_reply"/);
    assert.match(result.console, /after\n$/);
  });

  it("gives input() a clear error instead of reading the protocol", LIMIT, async () => {
    const result = await kernel.run("input('name? ')");
    assert.equal(result.status, "error");
    assert.match(result.error!.evalue, /stdin is not available/);
  });

  it("does not end the kernel on SystemExit", LIMIT, async () => {
    const result = await kernel.run("raise SystemExit(3)");
    assert.equal(result.error?.ename, "SystemExit");
    assert.equal((await kernel.run("'alive'")).result, "'alive'");
  });
});

describe("kernel interrupt and restart", () => {
  let kernel: TestKernel;
  before(async () => {
    kernel = await TestKernel.start();
  });
  after(async () => {
    await kernel.close();
  });

  for (const [name, loop] of [
    ["a busy loop", "while True: pass"],
    ["time.sleep(1000)", "import time; time.sleep(1000)"],
  ] as const) {
    it(`interrupts ${name} and returns to idle`, LIMIT, async () => {
      const cell = kernel.submit(`print('started', flush=True)\n${loop}`);
      await cell.waitForConsole((text) => text.includes("started"));
      kernel.session.interrupt();
      const result = await cell.done;
      assert.equal(result.status, "interrupted");
      assert.equal(result.error?.ename, "KeyboardInterrupt");
      assert.doesNotMatch(result.error!.traceback.join("\n"), /mgpulab_kernel|_on_sigint/);
      await kernel.waitForStatus((status) => status.state === "idle");
      assert.equal((await kernel.run("1 + 1")).result, "2");
    });
  }

  it("applies an interrupt sent before the kernel picked the cell up", LIMIT, async () => {
    const cell = kernel.submit("import time; time.sleep(1000)");
    await cell.sent;
    kernel.session.interrupt();
    assert.equal((await cell.done).status, "interrupted");
  });

  it("drops a cell interrupted while still queued", LIMIT, async () => {
    const cell = kernel.submit("'never'");
    kernel.session.interrupt();
    assert.equal((await cell.done).status, "aborted");
  });

  it("aborts queued cells after an interrupt", LIMIT, async () => {
    const first = kernel.submit("print('started', flush=True)\nimport time; time.sleep(1000)");
    const second = kernel.submit("'never'");
    await first.waitForConsole((text) => text.includes("started"));
    kernel.session.interrupt();
    assert.equal((await first.done).status, "interrupted");
    assert.equal((await second.done).status, "aborted");
  });

  it("restart gives a fresh namespace", LIMIT, async () => {
    await kernel.run("secret = 7");
    const pidBefore = kernel.session.pid;
    await kernel.session.restart();
    assert.notEqual(kernel.session.pid, pidBefore);
    const result = await kernel.run("secret");
    assert.equal(result.error?.ename, "NameError");
  });
});

describe("kernel death", () => {
  const cases = [
    { name: "kill -9 of itself", code: "import os; os.kill(os.getpid(), 9)", reason: /SIGKILL/ },
    { name: "os._exit(3)", code: "import os; os._exit(3)", reason: /code 3/ },
    { name: "a segfault", code: "import ctypes; ctypes.string_at(0)", reason: /SIGSEGV/, output: /Fatal Python error: Segmentation fault/ },
  ];
  for (const { name, code, reason, output } of cases) {
    it(`reports ${name} as a dead kernel with the reason, and can restart`, LIMIT, async () => {
      const kernel = await TestKernel.start();
      try {
        const result = await kernel.run(code);
        assert.equal(result.status, "kernel-died");
        const status = await kernel.waitForStatus((candidate) => candidate.state === "dead");
        assert.equal(status.state, "dead");
        if (status.state !== "dead") return;
        assert.match(status.reason, reason);
        if (output) assert.match(status.lastOutput, output);
        // The next run starts a new kernel, as Jupyter restarts one that died, and the cell says so first.
        const next = await kernel.run("'x' in dir()");
        assert.equal(next.status, "ok");
        assert.equal(next.result, "False", "a new namespace");
        assert.match(next.stderr, /^\[kernel\] The previous kernel stopped \(.+\)\. Running this cell started a new one: variables and imports from before are gone\./);
        assert.match(next.stderr, reason, "the cell names why the old one stopped");
        assert.equal((await kernel.run("6 * 7")).result, "42");
        assert.doesNotMatch((await kernel.run("1")).stderr, /previous kernel stopped/, "said once, by the run that restarted it");
      } finally {
        await kernel.close();
      }
    });
  }

  it("is killed from outside (kill -9) and leaves no zombie", LIMIT, async () => {
    const kernel = await TestKernel.start();
    try {
      const pid = kernel.session.pid!;
      process.kill(pid, "SIGKILL");
      const status = await kernel.waitForStatus((candidate) => candidate.state === "dead");
      assert.equal(status.state, "dead");
      assert.deepEqual(zombieChildren(), []);
    } finally {
      await kernel.close();
    }
  });

  it("takes the processes a cell started down with it on shutdown", LIMIT, async () => {
    const kernel = await TestKernel.start();
    const result = await kernel.run("import subprocess; p = subprocess.Popen(['sleep', '1000']); p.pid");
    const childPid = Number(result.result);
    assert.ok(processExists(childPid));
    await kernel.close();
    await waitUntil(() => !processExists(childPid) || isZombie(childPid));
    assert.deepEqual(zombieChildren(), []);
  });
});

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? false;
  } catch {
    return false;
  }
}

/** Zombie processes whose parent is this test process. */
function zombieChildren(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return fields[0] === "Z" && Number(fields[1]) === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Polls a condition on the event loop (process exit has no event we can subscribe to here). */
async function waitUntil(condition: () => boolean, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setImmediate(resolve));
  }
}
