/**
 * Predict first, then reveal: a scenario's explanation cells (templates with
 * `revealAfter`) stay folded until the verdicts of their claims are on the
 * page. A claim counts as shown when a verdict report in some cell's output
 * gives it a verdict (a claim that needs a run, or whose experiment failed,
 * reveals nothing).
 */
import type { CellOutput } from "../../../server/core/protocol/notebook-model";
import { VERDICTS_MIME } from "../../../server/core/protocol/metrics-model";
import { verdictReportSchema, type VerdictReport } from "../../../server/core/protocol/verdict-model";

/** The JSON text of a verdict report, validated; null when it is not JSON or not a report. */
export function parseVerdictReport(text: string): VerdictReport | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
  const parsed = verdictReportSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/**
 * Claim ids with a verdict in one output. Outputs are never changed in place
 * (the reducer makes new ones), so each is read once however often the
 * notebook re-renders while other cells stream.
 */
const verdictsOfOutput = new WeakMap<CellOutput, readonly string[]>();

function claimsOf(output: CellOutput): readonly string[] {
  if (output.kind !== "display" && output.kind !== "result") return [];
  let claims = verdictsOfOutput.get(output);
  if (claims === undefined) {
    const text = output.data[VERDICTS_MIME];
    claims = text === undefined ? [] : (parseVerdictReport(text)?.claims ?? []).filter((claim) => claim.verdict !== null).map((claim) => claim.id);
    verdictsOfOutput.set(output, claims);
  }
  return claims;
}

/** Ids of the claims whose verdict some cell's output shows. */
export function claimsWithVerdict(cells: ReadonlyArray<{ outputs: readonly CellOutput[] }>): Set<string> {
  const shown = new Set<string>();
  for (const cell of cells) for (const output of cell.outputs) for (const claim of claimsOf(output)) shown.add(claim);
  return shown;
}

/** Whether an explanation that waits for `revealAfter` may show: every claim it names has its verdict shown. */
export function isRevealed(revealAfter: readonly string[] | undefined, shown: ReadonlySet<string>): boolean {
  return revealAfter === undefined || revealAfter.every((claim) => shown.has(claim));
}
