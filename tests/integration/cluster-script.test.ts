/**
 * The one command for several lab servers (scripts/cluster.sh): it starts
 * PostgreSQL, Redis, two lab servers and nginx on loopback; the link it
 * prints signs in through nginx; a notebook made through one server is
 * driven there and opened through the balancer; SIGTERM stops every part.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, describe, it } from "node:test";
import { signInWithToken } from "../helpers/lab-session";
import { connectClient } from "../helpers/socket-harness";
import { freePort } from "../helpers/cluster-services";

const ROOT = path.resolve(__dirname, "..", "..");
const LIMIT = { timeout: 300_000 };

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("scripts/cluster.sh", () => {
  let child: ChildProcess | null = null;
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-cluster-script-"));
  // PostgreSQL runs as the postgres user when the tests run as root: it must reach its folder.
  chmodSync(dir, 0o755);
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((resolve) => child!.once("exit", resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts PostgreSQL, Redis, two lab servers and nginx; the printed link works through nginx; SIGTERM stops them all", LIMIT, async () => {
    const [publicPort, labA, labB, pgPort, redisPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const output: string[] = [];
    child = spawn("bash", ["scripts/cluster.sh"], {
      cwd: ROOT,
      env: {
        ...process.env,
        MGPULAB_CLUSTER_DIR: path.join(dir, "cluster"),
        PUBLIC_PORT: String(publicPort),
        LAB_PORTS: `${labA} ${labB}`,
        PG_PORT: String(pgPort),
        REDIS_PORT: String(redisPort),
        MGPULAB_AGENT_RUNTIME_DIR: path.join(dir, "agents"),
        MGPULAB_KERNEL_LEASE_SECONDS: "15",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const link = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no sign-in link in 240 s:\n${output.join("\n")}`)), 240_000);
      for (const stream of [child!.stdout!, child!.stderr!]) {
        createInterface({ input: stream }).on("line", (line) => {
          output.push(line);
          const found = /open the lab \(this link signs you in once\): (\S+)/.exec(line);
          if (found) {
            clearTimeout(timer);
            resolve(found[1]!);
          }
        });
      }
      child!.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`cluster.sh exited with ${code}:\n${output.join("\n")}`));
      });
    });
    assert.equal(new URL(link).port, String(publicPort), "the link goes through nginx");
    for (const port of [publicPort, labA, labB, pgPort, redisPort]) assert.ok(await accepts(port), `something listens on ${port}`);

    const cookie = await signInWithToken(link);
    const balanced = `http://127.0.0.1:${publicPort}`;
    const viaA = await connectClient(`http://127.0.0.1:${labA}`, cookie);
    const created = await viaA.sendLab({ op: "create-notebook", title: "through the script" });
    assert.ok(created.ok && created.notebook, JSON.stringify(created));
    assert.ok((await viaA.send({ op: "open", notebookId: created.notebook.id })).ok);
    for (let i = 0; i < 4; i += 1) {
      // Round-robin: these land on both servers; each opens the notebook server A drives.
      const client = await connectClient(balanced, cookie);
      const opened = await client.send({ op: "open", notebookId: created.notebook.id });
      assert.ok(opened.ok && opened.notebook, JSON.stringify(opened));
      client.close();
    }
    viaA.close();

    child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => child!.once("exit", resolve));
    assert.equal(code, 0, output.join("\n"));
    for (const port of [publicPort, labA, labB, pgPort, redisPort]) assert.equal(await accepts(port), false, `nothing listens on ${port} after the stop`);
  });
});
