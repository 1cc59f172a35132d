/**
 * The local agent link's process on plain pipes: bytes both ways, stderr in
 * the same stream (a failing bootstrap's last words), the exit as a PTY's
 * would report it, and terminate() reaching its whole group.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { constants } from "node:os";
import { PipeProcess } from "../../server/kernel/pipe-process";
import type { PtyExit } from "../../server/kernel/pty-process";

function started(argv: string[]): { child: PipeProcess; output: () => string; said: (text: string) => Promise<void>; exited: Promise<PtyExit> } {
  let text = "";
  const listeners = new Set<() => void>();
  let ended: (exit: PtyExit) => void = () => undefined;
  const exited = new Promise<PtyExit>((resolve) => (ended = resolve));
  const child = new PipeProcess(
    { argv },
    (bytes) => {
      text += bytes.toString("utf8");
      for (const listener of listeners) listener();
    },
    (exit) => ended(exit),
  );
  const said = (wanted: string): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!text.includes(wanted)) return;
        listeners.delete(check);
        resolve();
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => text, said, exited };
}

describe("PipeProcess", () => {
  it("echoes what is written, and reports every byte before the exit", async () => {
    const { child, output, exited } = started(["sh", "-c", "read line; echo \"got $line\"; echo oops >&2; exit 3"]);
    child.write("hello\n");
    const exit = await exited;
    assert.deepEqual(exit, { exitCode: 3, signal: null });
    assert.match(output(), /got hello\n/);
    assert.match(output(), /oops\n/, "stderr is part of the link's output, as on a PTY");
    assert.equal(child.hasExited, true);
    child.write("ignored after the exit\n");
  });

  it("terminate() ends it with SIGHUP, as a closing terminal would", async () => {
    const { child, said, exited } = started(["sh", "-c", "echo ready; exec cat"]);
    await said("ready");
    const exit = await child.terminate(5_000);
    assert.deepEqual(exit, { exitCode: 0, signal: constants.signals.SIGHUP });
    assert.deepEqual(await exited, exit);
  });

  it("terminate() signals the whole group, SIGKILL after the grace when SIGHUP is ignored", async () => {
    // Ignored SIGHUP is inherited: the shell and its sleep both outlive it.
    const { child, said, exited } = started(["sh", "-c", "trap '' HUP; sleep 60 & echo ready; wait"]);
    await said("ready");
    const exit = await child.terminate(300);
    assert.equal(exit?.signal, constants.signals.SIGKILL);
    assert.deepEqual(await exited, exit);
    assert.deepEqual(await child.waitForExit(10), exit);
  });

  it("a program that cannot start exits 127", async () => {
    const { exited } = started(["/nonexistent/mgpulab-no-such-program"]);
    assert.deepEqual(await exited, { exitCode: 127, signal: null });
  });
});
