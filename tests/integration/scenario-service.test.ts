/**
 * The warm catalog process the server keeps: its refusals reach the user as
 * command errors, and a crashed or killed interpreter is replaced on the next
 * request instead of leaving every form broken.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { CommandError } from "../../server/errors";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { ScenarioCatalog } from "../../server/scenarios/scenario-catalog";
import { ScenarioRequestError, ScenarioService } from "../../server/scenarios/scenario-service";

const LIMIT = { timeout: 60_000 };

describe("scenario catalog service", () => {
  const catalog = new ScenarioCatalog();
  after(() => catalog.close());

  it("renders a template with validated values, and refuses bad ones as the user's error", LIMIT, async () => {
    const rendered = await catalog.render("dp-basics/split", { batch_size: 48, devices: 2 });
    assert.match(rendered.source, /batch_size, devices = 48, 2/);
    assert.equal(rendered.template.detached, false);
    assert.equal(rendered.template.parameters.batch_size, 48);
    await assert.rejects(catalog.render("dp-basics/split", { batch_size: "48" }), (error: Error) => error instanceof CommandError && /batch_size/.test(error.message));
    await assert.rejects(catalog.render("dp-basics/nope", {}), CommandError);
    await assert.rejects(catalog.render("../../etc/passwd", {}), CommandError);
  });

  it("answers concurrent requests each with its own reply", LIMIT, async () => {
    const sizes = [8, 16, 24, 32, 40, 48, 56, 64];
    const sources = await Promise.all(sizes.map((batch_size) => catalog.render("dp-basics/split", { batch_size })));
    sources.forEach((rendered, i) => assert.match(rendered.source, new RegExp(`batch_size, devices = ${sizes[i]},`)));
  });

  it("replaces a killed interpreter on the next request", LIMIT, async () => {
    const service = new ScenarioService(chooseInterpreter().executable, 30_000);
    try {
      assert.ok(Array.isArray(await service.request("list", {})));
      const child = (service as unknown as { child: { pid: number } | null }).child;
      assert.ok(child);
      process.kill(child.pid, "SIGKILL");
      // The pending-or-next request either fails with the exit reason or is served by a new process; the one after works.
      await service.request("list", {}).catch((error: Error) => assert.match(error.message, /exited|stopped/));
      assert.ok(Array.isArray(await service.request("list", {})));
    } finally {
      service.stop();
    }
  });

  it("a protocol-level refusal is a ScenarioRequestError, not a crash", LIMIT, async () => {
    const service = new ScenarioService(chooseInterpreter().executable, 30_000);
    try {
      await assert.rejects(service.request("no-such-op", {}), ScenarioRequestError);
      await assert.rejects(service.request("render", { templateId: 7 }), ScenarioRequestError);
      assert.ok(Array.isArray(await service.request("list", {})), "still serving");
    } finally {
      service.stop();
    }
  });
});
