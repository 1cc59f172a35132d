/**
 * The parameter form's rules (the catalog's, mirrored: the server re-checks)
 * and the markup of the form and the detached bar, rendered to static HTML.
 */
// Before the components: they import their stylesheets.
import "../helpers/stylesheet-stub";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import ParameterForm from "../../components/notebook/ParameterForm";
import TemplateBar from "../../components/notebook/TemplateBar";
import { allowedText, changedValues, checkFieldValue, parseFieldText, type FieldParse } from "../../components/notebook/model/parameter-form";
import type { CellTemplate, ParameterField } from "../../server/core/protocol/notebook-model";

const batchSize: ParameterField = { name: "batch_size", type: "int", default: 64, help: "samples per step, split across devices", min: 1, max: 512 };
const lr: ParameterField = { name: "lr", type: "float", default: 0.01, help: "learning rate", min: 0, max: 10 };
const pinMemory: ParameterField = { name: "pin_memory", type: "bool", default: false, help: "page-locked host memory" };
const backend: ParameterField = { name: "backend", type: "choice", default: "gloo", help: "collective backend", choices: ["gloo", "nccl"] };

const template: CellTemplate = {
  id: "dp_basics/train",
  parameters: { batch_size: 128, lr: 0.01, pin_memory: true, backend: "gloo", devices: 2 },
  detached: false,
  fields: [batchSize, lr, pinMemory, backend],
  question: null,
};

const ok = (value: string | number | boolean): FieldParse => ({ ok: true, value });
const bad = (message: string): FieldParse => ({ ok: false, message });

describe("parseFieldText", () => {
  it("reads an int from digits only, inside inclusive bounds", () => {
    assert.deepEqual(parseFieldText(batchSize, "64"), ok(64));
    assert.deepEqual(parseFieldText(batchSize, " 1 "), ok(1));
    assert.deepEqual(parseFieldText(batchSize, "512"), ok(512));
    assert.deepEqual(parseFieldText(batchSize, "+7"), ok(7));
    const refused = bad("batch_size must be an int in [1, 512]");
    for (const text of ["0", "513", "-1", "1.5", "64.0", "1e3", "0x10", "5_000", "99999999999999999999", ""]) {
      assert.deepEqual(parseFieldText(batchSize, text), refused, text);
    }
  });

  it("reads a finite decimal or scientific float", () => {
    assert.deepEqual(parseFieldText(lr, "0.5"), ok(0.5));
    assert.deepEqual(parseFieldText(lr, ".5"), ok(0.5));
    assert.deepEqual(parseFieldText(lr, "3."), ok(3));
    assert.deepEqual(parseFieldText(lr, "1e-3"), ok(0.001));
    assert.deepEqual(parseFieldText(lr, "10"), ok(10));
    assert.deepEqual(parseFieldText(lr, "-0"), ok(0));
    assert.ok(Object.is((parseFieldText(lr, "-0") as { value: number }).value, 0), "-0 is sent as 0");
    const refused = bad("lr must be a float in [0, 10]");
    for (const text of ["10.0001", "-0.1", "1e309", "inf", "NaN", "Infinity", "1,5", "e3", ""]) {
      assert.deepEqual(parseFieldText(lr, text), refused, text);
    }
  });

  it("reads a bool as the catalog does and a choice only from its list", () => {
    for (const text of ["true", "TRUE", "1", "yes"]) assert.deepEqual(parseFieldText(pinMemory, text), ok(true), text);
    for (const text of ["false", "0", "No"]) assert.deepEqual(parseFieldText(pinMemory, text), ok(false), text);
    assert.deepEqual(parseFieldText(pinMemory, "maybe"), bad("pin_memory must be true or false"));
    assert.deepEqual(parseFieldText(backend, "nccl"), ok("nccl"));
    assert.deepEqual(parseFieldText(backend, "NCCL"), bad("backend must be one of 'gloo', 'nccl'"));
  });

  it("refuses code in every kind of field", () => {
    for (const field of [batchSize, lr, pinMemory, backend]) {
      for (const text of ["1; import os", "__import__('os')", "gloo'); import os; ('", "{{lr}}", "1\nimport os"]) {
        assert.equal(parseFieldText(field, text).ok, false, `${field.name}: ${JSON.stringify(text)}`);
      }
    }
  });

  it("says what is allowed when a bound is missing", () => {
    assert.equal(allowedText({ ...batchSize, max: undefined }), "an int ≥ 1");
    assert.equal(allowedText({ ...lr, min: undefined }), "a float ≤ 10");
    assert.equal(allowedText({ ...lr, min: undefined, max: undefined }), "a float");
  });
});

describe("checkFieldValue and changedValues", () => {
  it("checks typed values by type, not by what they look like", () => {
    assert.equal(checkFieldValue(batchSize, "64").ok, false);
    assert.equal(checkFieldValue(batchSize, true).ok, false);
    assert.equal(checkFieldValue(batchSize, 2.5).ok, false);
    assert.equal(checkFieldValue(lr, Number.POSITIVE_INFINITY).ok, false);
    assert.equal(checkFieldValue(pinMemory, "true").ok, false);
    assert.equal(checkFieldValue(backend, "mpi").ok, false);
    assert.deepEqual(checkFieldValue(lr, 2), ok(2));
  });

  it("sends only this template's fields whose valid value differs from the scenario's", () => {
    assert.deepEqual(changedValues(template, { batch_size: 256, lr: 0.01, pin_memory: false }), { batch_size: 256, pin_memory: false });
    assert.deepEqual(changedValues(template, { batch_size: 128 }), {}, "unchanged");
    assert.deepEqual(changedValues(template, { batch_size: 1000, backend: "mpi", lr: Number.NaN }), {}, "invalid");
    assert.deepEqual(changedValues(template, { devices: 4, toString: 1 }), {}, "not a field of this cell");
  });

  it("compares against the field's default when the scenario has no value for it", () => {
    const partial: CellTemplate = { ...template, parameters: {} };
    assert.deepEqual(changedValues(partial, { batch_size: 64 }), {});
    assert.deepEqual(changedValues(partial, { batch_size: 65 }), { batch_size: 65 });
  });
});

/** Every opening tag carrying `data-testid="<id>"`. */
function tags(html: string, testId: string): string[] {
  return html.match(new RegExp(`<[a-z]+[^>]*data-testid="${testId}"[^>]*>`, "g")) ?? [];
}

/** The markup of the field wrapper named `name` (up to the next field or the end). */
function field(html: string, name: string): string {
  const start = html.indexOf(`data-name="${name}"`);
  assert.ok(start >= 0, `field ${name} rendered`);
  const next = html.indexOf('data-testid="parameter-field"', start);
  return html.slice(start, next < 0 ? undefined : next);
}

/** An attribute's text (entities decoded), "" when present without a value, null when absent. */
function attr(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}(?:="([^"]*)")?[\\s/>]`).exec(tag);
  if (match === null) return null;
  return (match[1] ?? "").replace(/&#x27;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

const noop = () => {};

function renderForm(overrides: Partial<Parameters<typeof ParameterForm>[0]> = {}): string {
  return renderToStaticMarkup(createElement(ParameterForm, { template, disabled: false, serverError: null, onApply: noop, onDetach: noop, ...overrides }));
}

describe("ParameterForm markup", () => {
  it("renders one labelled field per template field, in order, with the scenario's values", () => {
    const html = renderForm();
    assert.equal(tags(html, "parameter-form").length, 1);
    const names = tags(html, "parameter-field").map((t) => attr(t, "data-name"));
    assert.deepEqual(names, ["batch_size", "lr", "pin_memory", "backend"]);

    const [intInput] = tags(field(html, "batch_size"), "parameter-input");
    assert.ok(intInput);
    assert.equal(attr(intInput, "type"), "number");
    assert.equal(attr(intInput, "min"), "1");
    assert.equal(attr(intInput, "max"), "512");
    assert.equal(attr(intInput, "step"), "1");
    assert.equal(attr(intInput, "value"), "128", "the scenario's value, not the default");
    // The help is described by reference (rendered as markdown beside the input), not repeated as raw text in a tooltip.
    assert.equal(attr(intInput, "title"), null);
    const helpId = attr(intInput, "aria-describedby");
    assert.ok(helpId);
    assert.ok(field(html, "batch_size").includes(`id="${helpId}">${batchSize.help}<`), "the help text carries the id the input names");

    const [floatInput] = tags(field(html, "lr"), "parameter-input");
    assert.ok(floatInput);
    assert.equal(attr(floatInput, "type"), "number");
    assert.equal(attr(floatInput, "step"), "any");

    const [checkbox] = tags(field(html, "pin_memory"), "parameter-input");
    assert.ok(checkbox);
    assert.equal(attr(checkbox, "type"), "checkbox");
    assert.notEqual(attr(checkbox, "checked"), null);

    const choice = field(html, "backend");
    const [select] = tags(choice, "parameter-input");
    assert.ok(select?.startsWith("<select"));
    assert.match(choice, /<option value="gloo" selected="">gloo<\/option><option value="nccl">nccl<\/option>/);
  });

  it("ties each label and help line to its input", () => {
    const html = field(renderForm(), "batch_size");
    const [input] = tags(html, "parameter-input");
    assert.ok(input);
    const id = attr(input, "id");
    assert.ok(id);
    assert.match(html, new RegExp(`<label[^>]*for="${id}"[^>]*>batch_size</label>`));
    const helpId = attr(input, "aria-describedby");
    assert.match(html, new RegExp(`<small[^>]*id="${helpId}"[^>]*>samples per step, split across devices</small>`));
  });

  it("explains the template, offers Detach, and shows the server's refusal", () => {
    const html = renderForm({ serverError: "batch_size must be divisible by devices (2)" });
    assert.match(html, /rendered from template <code>dp_basics\/train<\/code>/);
    assert.match(html, /applies to every attached cell/);
    const [detach] = tags(html, "template-detach");
    assert.ok(detach?.startsWith("<button"));
    assert.match(attr(detach, "title") ?? "", /edit the code freely; the form stops applying/);
    const errors = tags(html, "parameter-error");
    assert.equal(errors.length, 1);
    assert.equal(attr(errors[0] ?? "", "data-kind"), "server");
    assert.match(html, /role="alert"[^>]*>batch_size must be divisible by devices \(2\)</);
    assert.equal(tags(renderForm(), "parameter-error").length, 0, "no error, no message");
  });

  it("disables every control while disabled", () => {
    const html = renderForm({ disabled: true });
    const controls = [...tags(html, "parameter-input"), ...tags(html, "template-detach")];
    assert.equal(controls.length, 5);
    for (const tag of controls) assert.notEqual(attr(tag, "disabled"), null, tag);
    for (const tag of tags(renderForm(), "parameter-input")) assert.equal(attr(tag, "disabled"), null, tag);
  });
});

describe("TemplateBar markup", () => {
  it("says the cell is detached and offers Reattach with its cost", () => {
    const html = renderToStaticMarkup(createElement(TemplateBar, { template: { ...template, detached: true }, onReattach: noop }));
    assert.match(html, /data-testid="template-detached"/);
    assert.match(html, /Detached from template <code>dp_basics\/train<\/code> — the form no longer applies\./);
    const [reattach] = tags(html, "template-reattach");
    assert.ok(reattach?.startsWith("<button"));
    assert.match(attr(reattach, "title") ?? "", /re-render from the template with the scenario's values; discards your edits/);
  });
});
