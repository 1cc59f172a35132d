/**
 * Imported outputs obey the budget of live ones: each code cell's outputs go
 * through the same OutputRecorder a live run uses (first headChars of stream
 * text, last tailChars, an elided marker between; oversized rich outputs
 * reduced), and the import notes say what it cut.
 */
import type { CellOutput } from "../core/protocol/notebook-model";
import { OutputRecorder, richOutputChars, type OutputBudget, type StreamName } from "../notebook/output-recorder";
import type { NbformatOutput } from "./nbformat-schema";
import { parseElidedMarker } from "./markers";

/**
 * Stream text reaches the recorder in pieces of about this size: lines one by
 * one would make the recorder re-cut its tail once per line.
 */
const FEED_CHARS = 64 * 1024;
/** Longer than any elided marker ("[mgpulab: <15 digits> bytes of output elided]\n"). */
const MARKER_MAX_CHARS = 64;

export interface BudgetedOutputs {
  outputs: CellOutput[];
  /** What the budget cut, for the import notes; empty when nothing was cut. */
  elided: string[];
}

export function budgetOutputs(outputs: readonly NbformatOutput[], budget: OutputBudget): BudgetedOutputs {
  const recorder = new OutputRecorder(budget);
  const elided: string[] = [];
  const reduced: string[] = [];
  const stream = new StreamFeeder(recorder);
  for (const [index, output] of outputs.entries()) {
    if (output.output_type === "stream") {
      const marker = output.text.length <= MARKER_MAX_CHARS ? parseElidedMarker(output.text.text()) : null;
      if (marker === null) {
        stream.add(output.name, output.text.parts);
        continue;
      }
      // Cut by an earlier budget (a lab export): kept in place, as the live recorder left it.
      stream.flush();
      recorder.output({ kind: "elided", elidedBytes: marker });
      continue;
    }
    stream.flush();
    const rich = toRichOutput(output);
    const [kept] = recorder.output(rich);
    if (kept?.kind === "output" && kept.output !== rich) reduced.push(describeReduction(index, rich, kept.output));
  }
  stream.flush();
  const result = recorder.outputs();
  const keptStream = result.reduce((sum, output) => sum + (output.kind === "stream" ? output.text.length : 0), 0);
  const streamElided = stream.fedChars - keptStream;
  if (streamElided > 0) {
    elided.unshift(`${count(streamElided)} characters of stream text (the first ${count(budget.headChars)} and the last ${count(budget.tailChars)} are kept, as for a live run)`);
  }
  if (reduced.length > 0) elided.push(`${reduced.join(", ")} (a rich output keeps at most ${count(budget.richOutputChars ?? 0)} characters)`);
  return { outputs: result, elided };
}

/** Joins consecutive stream parts of one name into pieces of about FEED_CHARS for the recorder. */
class StreamFeeder {
  fedChars = 0;
  private name: StreamName = "stdout";
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(private readonly recorder: OutputRecorder) {}

  add(name: StreamName, parts: readonly string[]): void {
    if (name !== this.name) {
      this.flush();
      this.name = name;
    }
    for (const part of parts) {
      this.pending.push(part);
      this.pendingChars += part.length;
      if (this.pendingChars >= FEED_CHARS) this.flush();
    }
  }

  flush(): void {
    if (this.pendingChars > 0) {
      this.recorder.stream(this.name, this.pending.length === 1 ? this.pending[0]! : this.pending.join(""));
      this.fedChars += this.pendingChars;
    }
    this.pending = [];
    this.pendingChars = 0;
  }
}

function toRichOutput(output: Exclude<NbformatOutput, { output_type: "stream" }>): CellOutput {
  switch (output.output_type) {
    case "execute_result":
      return { kind: "result", executionCount: output.execution_count ?? 0, data: joinBundle(output.data) };
    case "display_data":
      return { kind: "display", data: joinBundle(output.data) };
    case "error":
      return { kind: "error", ename: output.ename, evalue: output.evalue, traceback: output.traceback };
  }
}

function joinBundle(data: Extract<NbformatOutput, { output_type: "display_data" }>["data"]): Record<string, string> {
  const bundle: Record<string, string> = {};
  for (const [mime, parts] of Object.entries(data)) bundle[mime] = parts.text();
  return bundle;
}

function describeReduction(index: number, original: CellOutput, kept: CellOutput): string {
  if (original.kind === "result" || original.kind === "display") {
    const keptData = kept.kind === original.kind ? kept.data : {};
    const dropped = Object.entries(original.data).filter(([mime]) => !Object.hasOwn(keptData, mime));
    return `outputs[${index}] ${dropped.map(([mime, value]) => `${mime} (${count(value.length)} characters)`).join(", ")}`;
  }
  if (original.kind === "error" && kept.kind === "error") {
    return `outputs[${index}] the first ${count(original.traceback.length - kept.traceback.length)} traceback lines of ${original.ename}`;
  }
  return `outputs[${index}] (an ${original.kind} output of ${count(richOutputChars(original))} characters)`;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}
