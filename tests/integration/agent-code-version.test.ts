/**
 * The lab and its agents cannot drift apart: an agent an older lab started
 * (other code) is replaced with this lab's when it runs no kernel, and kept
 * (with a warning) while it still runs someone's kernel. Real agents on this
 * machine, started through the real bootstrap.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { DEFAULT_AGENT_BUFFER_BYTES } from "../../server/core/protocol/agent-messages";
import { agentCode, type AgentCode, type AgentBootSettings } from "../../server/hosts/agent-link";
import { HostAgent } from "../../server/hosts/host-agent";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";

const LIMIT = { timeout: 60_000 };
const OLDER: AgentCode = { ...agentCode(), codeHash: "0000000000000000older0lab0code000" };

describe("an agent that runs another lab version's code", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-agent-code-"));
  const python = chooseInterpreter().executable;
  const agents: HostAgent[] = [];
  after(async () => {
    for (const agent of agents) await agent.shutdownAgent().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  function hostAgent(agentId: string, code?: AgentCode, log: string[] = []): HostAgent {
    const settings: AgentBootSettings = {
      agentId,
      leaseSeconds: 30,
      bufferBytes: DEFAULT_AGENT_BUFFER_BYTES,
      gpus: null,
      whenFull: "queue",
      interruptGraceMs: 2000,
      python: null,
      runtimeDir: dir,
    };
    const agent = new HostAgent({
      hostId: "local",
      transport: { launchArgv: (bootstrap) => [python, "-u", "-c", bootstrap], describe: () => "this machine" },
      settings,
      log: (level, message) => log.push(`${level}: ${message}`),
      ...(code ? { code } : {}),
    });
    agents.push(agent);
    return agent;
  }

  it("is replaced with this lab's code when it runs no kernel", LIMIT, async () => {
    const older = hostAgent("replace-me", OLDER);
    const oldHello = await older.connect();
    assert.equal(oldHello.codeHash, OLDER.codeHash);
    await older.detach();

    const log: string[] = [];
    const current = hostAgent("replace-me", undefined, log);
    const hello = await current.connect();
    assert.equal(hello.codeHash, agentCode().codeHash, "the agent now runs this lab's code");
    assert.notEqual(hello.pid, oldHello.pid, "a new agent process");
    assert.ok(log.some((line) => line.includes("replacing its agent")), log.join("\n"));
  });

  it("is kept, with a warning, while it still runs a kernel", LIMIT, async () => {
    const older = hostAgent("keep-me", OLDER);
    await older.connect();
    const kernelId = `k-${randomUUID()}`;
    const ignore = () => undefined;
    await older.startKernel(kernelId, { gpus: 0, cwd: null, env: {} }, { frame: ignore, console: ignore, badFrame: ignore, exit: ignore });
    await older.detach();

    const log: string[] = [];
    const current = hostAgent("keep-me", undefined, log);
    const hello = await current.connect();
    assert.equal(hello.codeHash, OLDER.codeHash, "the agent with a kernel is not ended");
    assert.ok(hello.kernels.some((kernel) => kernel.kernel === kernelId && kernel.state === "running"), "its kernel still runs");
    assert.ok(log.some((line) => line.startsWith("warning:") && line.includes("runs other code")), log.join("\n"));
  });
});
