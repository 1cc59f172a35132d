/**
 * What a scenario's parameter form accepts, mirroring the catalog's
 * `Parameter.parse`/`check` (kernels/mgpulab_scenarios/parameters.py). The server
 * re-validates in Python and stays the authority (it also checks limits
 * across parameters); this gives instant feedback and keeps the form from
 * sending a value it already knows is invalid.
 */
import type { CellTemplate, ParameterField, ParameterValue } from "../../../server/core/protocol/notebook-model";

export type FieldParse = { ok: true; value: ParameterValue } | { ok: false; message: string };

// The catalog's own patterns: digits only for int (no "1e3", "0x10", "5_000"), plain decimal or scientific for float.
const INT_TEXT = /^[+-]?\d+$/;
const FLOAT_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_TEXT = ["true", "1", "yes"];
const FALSE_TEXT = ["false", "0", "no"];

/** "an int in [1, 512]", "true or false", "one of 'nccl', 'gloo'": the words of the catalog's `allowed()`. */
export function allowedText(field: ParameterField): string {
  switch (field.type) {
    case "bool":
      return "true or false";
    case "choice":
      return `one of ${(field.choices ?? []).map((c) => `'${c}'`).join(", ")}`;
    case "int":
    case "float": {
      const kind = field.type === "int" ? "an int" : "a float";
      if (field.min !== undefined && field.max !== undefined) return `${kind} in [${field.min}, ${field.max}]`;
      if (field.min !== undefined) return `${kind} ≥ ${field.min}`;
      if (field.max !== undefined) return `${kind} ≤ ${field.max}`;
      return kind;
    }
  }
}

function refuse(field: ParameterField): FieldParse {
  return { ok: false, message: `${field.name} must be ${allowedText(field)}` };
}

/** A typed value checked against the field: right type, finite, within the inclusive bounds, one of the choices. */
export function checkFieldValue(field: ParameterField, value: ParameterValue): FieldParse {
  switch (field.type) {
    case "bool":
      return typeof value === "boolean" ? { ok: true, value } : refuse(field);
    case "choice":
      return typeof value === "string" && (field.choices ?? []).includes(value) ? { ok: true, value } : refuse(field);
    case "int":
    case "float": {
      if (typeof value !== "number" || !Number.isFinite(value)) return refuse(field);
      // Beyond 2^53 an int is no longer the digits typed; bounds in the catalog are far below that.
      if (field.type === "int" && !Number.isSafeInteger(value)) return refuse(field);
      if (field.min !== undefined && value < field.min) return refuse(field);
      if (field.max !== undefined && value > field.max) return refuse(field);
      return { ok: true, value: value === 0 ? 0 : value }; // -0 would render as "-0.0" in Python
    }
  }
}

/** What the user typed into a field, as its typed value or the message saying what is allowed. */
export function parseFieldText(field: ParameterField, text: string): FieldParse {
  const trimmed = text.trim();
  switch (field.type) {
    case "bool": {
      const lowered = trimmed.toLowerCase();
      if (TRUE_TEXT.includes(lowered)) return { ok: true, value: true };
      if (FALSE_TEXT.includes(lowered)) return { ok: true, value: false };
      return refuse(field);
    }
    case "choice":
      return checkFieldValue(field, trimmed);
    case "int":
      return INT_TEXT.test(trimmed) ? checkFieldValue(field, Number(trimmed)) : refuse(field);
    case "float":
      return FLOAT_TEXT.test(trimmed) ? checkFieldValue(field, Number(trimmed)) : refuse(field);
  }
}

/** The value the form shows for a field: the scenario's current value, else the field's default. */
export function currentValue(template: CellTemplate, field: ParameterField): ParameterValue {
  return template.parameters[field.name] ?? field.default;
}

/** A value as the text a field's input holds. */
export function fieldText(value: ParameterValue): string {
  return String(value);
}

/**
 * The draft entries worth sending: fields of this template whose value is
 * valid and differs from the scenario's current one. Anything else (unknown
 * names, invalid or unchanged values) is left out.
 */
export function changedValues(template: CellTemplate, draft: Record<string, ParameterValue>): Record<string, ParameterValue> {
  const changed: Record<string, ParameterValue> = {};
  for (const field of template.fields) {
    if (!Object.hasOwn(draft, field.name)) continue;
    const draftValue = draft[field.name];
    if (draftValue === undefined) continue;
    const checked = checkFieldValue(field, draftValue);
    if (checked.ok && checked.value !== currentValue(template, field)) changed[field.name] = checked.value;
  }
  return changed;
}

/** The HTML attributes of a number field: the browser's spinner and validity follow the catalog's bounds. */
export function numberInputAttributes(field: ParameterField): { min?: number; max?: number; step: number | "any" } {
  return { min: field.min, max: field.max, step: field.type === "int" ? 1 : "any" };
}
