/**
 * A cell run while the lab's link to the host agent is down: the execute
 * cannot reach the kernel then, and is sent again on the next link, which
 * the kernel runs once. Found by the chaos run (`npm run chaos`): before, a
 * Run pressed in the second after the link dropped was acknowledged and the
 * cell stayed "running" for ever, in the page and in the database.
 *
 * The link's way back is held shut by a gate (the host's launch command
 * fails while a file exists), so the Run surely meets the outage.
 */
import assert from "node:assert/strict";
import { readFileSync, readlinkSync, rmSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { LabHosts, localHostSpec } from "../../server/hosts/lab-hosts";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { descendants, pollUntil, signal } from "../helpers/daemons";
import { shownText } from "../helpers/cell-text";
import { SocketHarness } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("a cell run while the link to the host agent is down", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-link-input-"));
  const gate = path.join(dir, "link-gate");
  let harness: SocketHarness;

  function gatedHosts(labId: string): LabHosts {
    const local = localHostSpec(chooseInterpreter().executable, { leaseSeconds: 30, runtimeDir: path.join(dir, "agents") });
    const base = local.transport;
    // While the gate exists the launch fails at once, as an unreachable host's would: the lab keeps retrying.
    const transport = { launchArgv: (bootstrap: string) => ["sh", "-c", 'test -e "$0" && exit 1; exec "$@"', gate, ...base.launchArgv(bootstrap)], channel: base.channel, describe: () => base.describe() };
    return new LabHosts([{ ...local, transport }], "local", labId, () => undefined);
  }

  before(async () => {
    harness = await SocketHarness.start({ dataDir: path.join(dir, "data"), hosts: gatedHosts });
  });
  after(async () => {
    await harness?.lab.hosts?.agent("local")?.shutdownAgent();
    await harness?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is sent again once the link is back, and runs once", LIMIT, async () => {
    const client = await harness.client();
    try {
      const created = await client.sendLab({ op: "create-notebook", title: "link input" });
      assert.ok(created.ok && created.notebook);
      const notebookId = created.notebook.id;
      const opened = await client.send({ op: "open", notebookId });
      assert.ok(opened.ok && opened.notebook);
      const cellId = opened.notebook.cells[0]!.id;
      assert.ok((await client.run(notebookId, { [cellId]: "x = 41" })).ok);
      await client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId);

      // The link drops (its local end killed) and cannot come back while the gate exists.
      writeFileSync(gate, "");
      const agent = harness.lab.hosts!.agent("local")!;
      const relays = descendants(process.pid).filter((pid) => commandLine(pid).includes("MGPULAB_AGENT_BOOT"));
      assert.ok(relays.length >= 1, "the lab has a link process to the agent");
      // The local link is direct: Node's child stdio "pipes" are socket pairs, and the bootstrap handed both to the
      // agent, which reads and writes them itself (links.py go_direct): no process between the lab and the agent.
      // The bootstrap only lives as long as the link, and killing it still drops the link (below).
      for (const pid of relays) {
        for (const fd of [0, 1]) assert.equal(readlinkSync(`/proc/${pid}/fd/${fd}`), "/dev/null", `the local link's bootstrap gave the agent its fd ${fd}`);
      }
      signal(relays, "SIGKILL");
      await pollUntil("the link to be down", () => agent.state.state === "unreachable", 20_000);

      const finishedBefore = client.events.filter((event) => event.type === "cell-finished").length;
      const ran = await client.run(notebookId, { [cellId]: "x += 1\nprint('after the drop', x)" });
      assert.deepEqual(ran, { ok: true }, "the run is taken while the link is down");
      rmSync(gate);
      const finished = await Promise.race([
        client.waitFor((event) => event.type === "cell-finished" && event.cellId === cellId && client.events.filter((each) => each.type === "cell-finished").length > finishedBefore),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000)),
      ]);
      assert.ok(finished, "the cell ended once the link was back (60 s)");
      assert.ok(finished.type === "cell-finished" && finished.status === "ok", JSON.stringify(finished));
      assert.match(shownText(client.events, cellId), /^after the drop 42\n$/, "it ran once, in the same kernel");
    } finally {
      client.close();
    }
  });
});

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}
