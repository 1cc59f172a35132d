/**
 * The ssh transport through a real sshd on 127.0.0.1 (Debian's openssh-server,
 * installed by the suite when missing): the argv from transportFor() runs the
 * bootstrap in a real PTY and talks to it; a key the server does not accept
 * fails at once with ssh's own message (BatchMode: no prompt hangs the PTY);
 * a dropped connection ends the PTY.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseHostsConfig, type HostConfig } from "../../server/hosts/host-config";
import { transportFor } from "../../server/hosts/host-transport";
import { ECHO_BOOTSTRAP, PtyLink } from "../helpers/pty-link";
import { sshdUnavailable, startSshd, type TestSshd } from "../helpers/sshd";

const skip = sshdUnavailable() ?? false;

function sshHost(sshd: TestSshd, identityFile: string, options = sshd.sshOptions()): HostConfig {
  const config = parseHostsConfig(
    { hosts: [{ id: "box", kind: "ssh", python: "/usr/bin/python3", ssh: { host: "127.0.0.1", port: sshd.port, user: sshd.user, identityFile, options, connectTimeoutSeconds: 5 } }] },
    "test hosts.json",
  );
  const host = config.hosts.find((candidate) => candidate.id === "box");
  assert.ok(host);
  return host;
}

describe("ssh transport through a real sshd", { skip }, () => {
  let sshd: TestSshd;
  const links: PtyLink[] = [];
  before(async () => {
    sshd = await startSshd();
  });
  after(async () => {
    for (const link of links) await link.pty.terminate(1000);
    await sshd.stop();
  });

  it("runs the bootstrap on the host in a PTY, which reaches the marker and answers a line", async () => {
    const transport = transportFor(sshHost(sshd, sshd.identityFile));
    assert.match(transport.describe(), new RegExp(`^${sshd.user}@127\\.0\\.0\\.1:${sshd.port} \\(ssh\\)$`));
    const link = new PtyLink(transport.launchArgv(ECHO_BOOTSTRAP));
    links.push(link);
    const [, pid] = await link.waitFor(/LINK-READY pid=(\d+)/);
    // The bootstrap runs in sshd's session, not as a child of this process.
    assert.notEqual(Number(pid), link.pty.pid);
    link.write("olleh ,hsh\n");
    await link.waitFor(/ECHO:hsh, hello/);
  });

  it("fails fast with ssh's own message when the server refuses the key (no prompt)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-wrong-key-"));
    try {
      const wrongKey = path.join(dir, "wrong_key");
      assert.equal(spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", wrongKey]).status, 0);
      const started = Date.now();
      const link = new PtyLink(transportFor(sshHost(sshd, wrongKey)).launchArgv(ECHO_BOOTSTRAP));
      links.push(link);
      const exit = await link.pty.waitForExit(15_000);
      assert.ok(exit, `ssh was still running after 15 s:\n${link.output()}`);
      assert.equal(exit.exitCode, 255);
      assert.match(link.output(), /Permission denied \(publickey\)/);
      assert.doesNotMatch(link.output(), /LINK-READY/);
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // ssh's default for a host it has never seen is to ask on the tty: without BatchMode the PTY would wait forever.
  it("fails fast on a host key it cannot check, instead of asking on the PTY", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-no-known-hosts-"));
    try {
      const options = { UserKnownHostsFile: path.join(dir, "known_hosts"), GlobalKnownHostsFile: "/dev/null" };
      const link = new PtyLink(transportFor(sshHost(sshd, sshd.identityFile, options)).launchArgv(ECHO_BOOTSTRAP));
      links.push(link);
      const exit = await link.pty.waitForExit(10_000);
      assert.ok(exit, `ssh was still running after 10 s:\n${link.output()}`);
      assert.equal(exit.exitCode, 255);
      assert.match(link.output(), /Host key verification failed/);
      assert.doesNotMatch(link.output(), /LINK-READY|continue connecting/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ends the PTY when the connection drops", async () => {
    const link = new PtyLink(transportFor(sshHost(sshd, sshd.identityFile)).launchArgv(ECHO_BOOTSTRAP));
    links.push(link);
    await link.waitFor(/LINK-READY/);
    await sshd.kill();
    const exit = await link.pty.waitForExit(15_000);
    assert.ok(exit, `the PTY still runs 15 s after sshd was killed:\n${link.output()}`);
    assert.notEqual(exit.exitCode, 0);
  });
});
