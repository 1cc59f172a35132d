/**
 * The facilitator's broadcast form: "name=value" preset lines read as a
 * scenario form's values, the command the form sends (or why it cannot be
 * sent), and a preset in one line for the list of broadcasts. Pure, apart
 * from the console's controller, so the rules are tested without a browser.
 */
import type { ParameterValue } from "../../../server/core/protocol/notebook-model";
import type { LabRequest } from "../../../server/core/protocol/ops-lab";

const PARAMETER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const MAX_PRESET_VALUES = 64;
const MAX_PRESET_STRING = 200;

/**
 * "name=value" lines as a scenario form's values: numbers, true/false, and
 * anything else as text (quotes keep a number or a boolean as text: name="4").
 * Blank lines and lines starting with # are skipped.
 */
export function parsePreset(text: string): { ok: true; values: Record<string, ParameterValue> } | { ok: false; error: string } {
  const values: Record<string, ParameterValue> = {};
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    if (at < 0) return { ok: false, error: `line ${index + 1}: write name=value` };
    const name = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    if (!PARAMETER_NAME.test(name)) return { ok: false, error: `line ${index + 1}: "${name}" is not a parameter name (letters, digits and _, not starting with a digit)` };
    if (Object.hasOwn(values, name)) return { ok: false, error: `line ${index + 1}: ${name} is set twice` };
    const typed = typedValue(value);
    if (typeof typed === "string" && typed.length > MAX_PRESET_STRING) return { ok: false, error: `line ${index + 1}: a text value has at most ${MAX_PRESET_STRING} characters` };
    values[name] = typed;
  }
  if (Object.keys(values).length > MAX_PRESET_VALUES) return { ok: false, error: `a preset sets at most ${MAX_PRESET_VALUES} parameters` };
  return { ok: true, values };
}

function typedValue(text: string): ParameterValue {
  if (text === "true") return true;
  if (text === "false") return false;
  if (NUMBER.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  const quoted = /^"(.*)"$/.exec(text) ?? /^'(.*)'$/.exec(text);
  return quoted?.[1] ?? text;
}

/** The broadcast form as typed: `scenarioId` "" for no preset. */
export interface BroadcastDraft {
  message: string;
  scenarioId: string;
  preset: string;
}

/** The command the form sends, or why it cannot be sent. */
export function broadcastCommand(workshopId: string, draft: BroadcastDraft): { ok: true; command: LabRequest<"workshop-broadcast"> } | { ok: false; error: string } {
  const message = draft.message.trim();
  const hasPreset = draft.preset.trim() !== "";
  if (draft.scenarioId === "" && hasPreset) return { ok: false, error: "pick the scenario the preset is for" };
  let preset: { scenarioId: string; values: Record<string, ParameterValue> } | undefined;
  if (draft.scenarioId !== "") {
    const parsed = parsePreset(draft.preset);
    if (!parsed.ok) return parsed;
    if (Object.keys(parsed.values).length === 0) return { ok: false, error: "a preset needs at least one name=value line" };
    preset = { scenarioId: draft.scenarioId, values: parsed.values };
  }
  if (message === "" && preset === undefined) return { ok: false, error: "write a message or a preset" };
  if (message.length > 2_000) return { ok: false, error: "a message has at most 2000 characters" };
  return { ok: true, command: { op: "workshop-broadcast", workshopId, ...(message === "" ? {} : { message }), ...(preset ? { preset } : {}) } };
}

/** A preset in one line: "dp-basics: devices=2, compare_ddp=false". */
export function presetText(preset: { scenarioId: string; values: Record<string, ParameterValue> }): string {
  return `${preset.scenarioId}: ${Object.entries(preset.values)
    .map(([name, value]) => `${name}=${typeof value === "string" ? JSON.stringify(value) : String(value)}`)
    .join(", ")}`;
}
