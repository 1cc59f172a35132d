/**
 * Templated cells: a form change re-renders every attached cell of the
 * scenario, changes run one at a time from the values the last one left,
 * and a reattach can be undone.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ParameterValue } from "../../server/core/protocol/notebook-model";
import { CommandError } from "../../server/errors";
import type { TemplateRenderer } from "../../server/notebook/template-cells";
import { TemplateWork } from "../../server/notebook/template-work";
import { cell, partsHarness, template } from "../helpers/runtime-parts";

/** Renders `<template>(<values>)`; the first render waits until `release` is called. */
function renderer(): TemplateRenderer & { release: () => void; calls: string[] } {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let first = true;
  const calls: string[] = [];
  return {
    calls,
    release: () => release(),
    render: async (templateId: string, params: Record<string, ParameterValue>) => {
      const text = `${templateId}(${Object.entries(params).map(([name, value]) => `${name}=${String(value)}`).join(",")})`;
      calls.push(text);
      if (first) {
        first = false;
        await held;
      }
      return { source: text, template: template(templateId, params) };
    },
  };
}

const scenarioCells = () => [
  cell("a", "old a", { template: template("s/a", { n: 1, m: 1 }) }),
  cell("b", "old b", { template: template("s/b", { n: 1, m: 1 }) }),
  cell("d", "mine", { template: template("s/d", { n: 1, m: 1 }, true) }),
];

describe("TemplateWork", () => {
  it("re-renders every attached cell of the scenario, one change after the other", async () => {
    const harness = partsHarness(scenarioCells());
    const templates = renderer();
    const work = new TemplateWork(harness.ctx, templates);
    const first = work.setParameters("a", { n: 2 });
    const second = work.setParameters("b", { m: 3 });
    templates.release();
    await Promise.all([first, second]);
    harness.ctx.events.flush();
    assert.deepEqual(harness.ctx.doc.cells.map((each) => each.source), ["s/a(n=2,m=3)", "s/b(n=2,m=3)", "mine"]);
    assert.deepEqual(harness.stored.map((call) => call.call), ["setTemplate", "setTemplate", "setTemplate", "setTemplate"]);
  });

  it("reattaches a detached cell with its scenario's values, and undoes it", async () => {
    const harness = partsHarness(scenarioCells());
    const templates = renderer();
    templates.release();
    const work = new TemplateWork(harness.ctx, templates);
    await work.reattach("d");
    harness.ctx.events.flush();
    assert.equal(harness.ctx.doc.cells[2]?.source, "s/d(n=1,m=1)");
    assert.equal(harness.ctx.doc.cells[2]?.template?.detached, false);
    await work.undoReattach("d");
    harness.ctx.events.flush();
    assert.equal(harness.ctx.doc.cells[2]?.source, "mine");
    assert.equal(harness.ctx.doc.cells[2]?.template?.detached, true);
  });

  it("refuses to reattach an attached cell, and forms without a catalog, changing nothing", async () => {
    const harness = partsHarness(scenarioCells());
    const work = new TemplateWork(harness.ctx, undefined);
    await assert.rejects(work.reattach("a"), (error: unknown) => error instanceof CommandError && error.code === "conflict");
    await assert.rejects(work.setParameters("a", { n: 5 }), (error: unknown) => error instanceof CommandError && error.code === "unavailable");
    await work.detach("a");
    harness.ctx.events.flush();
    assert.deepEqual(harness.ctx.doc.cells.map((each) => each.template?.detached), [true, false, true]);
    assert.deepEqual(harness.stored.map((call) => call.call), ["setTemplate"]);
  });
});
