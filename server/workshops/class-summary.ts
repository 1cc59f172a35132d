/**
 * The class summary a facilitator exports at the end (or any time: it
 * fills in step by step, as each experiment cell judges its claims): one
 * CSV row per participant and question — what they predicted, what their
 * own run measured, whether that matched, why nothing was measured when
 * their run decided nothing (its experiment failed, it has not run, the
 * measurement was inconclusive), and the verdict of each claim the
 * question is about. Made from the console's view, so the file says what
 * the console showed.
 */
import type { WorkshopConsoleView } from "../core/protocol/workshop-model";

export const CLASS_SUMMARY_COLUMNS = ["workshop", "scenario", "question_id", "question", "participant", "predicted", "measured", "prediction_right", "not_measured_because", "claim_verdicts"] as const;

export function classSummaryCsv(view: WorkshopConsoleView): string {
  const rows: string[][] = [[...CLASS_SUMMARY_COLUMNS]];
  for (const tally of view.tallies) {
    for (const row of view.roster) {
      const entry = tally.participants.find((participant) => participant.participantId === row.participantId);
      const predicted = entry?.predicted ?? "";
      const measured = entry?.measured ?? "";
      const verdicts = entry?.verdicts ?? {};
      const claimVerdicts = Object.keys(verdicts).length > 0 ? tally.claims.map((claim) => `${claim}=${verdicts[claim] ?? "none"}`).join("; ") : "";
      rows.push([
        view.workshop.title,
        tally.scenarioId,
        tally.questionId,
        tally.text,
        row.name,
        predicted,
        measured,
        predicted === "" || measured === "" ? "" : predicted === measured ? "yes" : "no",
        measured === "" ? (entry?.notMeasured ?? "not run yet") : "",
        claimVerdicts,
      ]);
    }
  }
  return rows.map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}

/**
 * RFC 4180 quoting, and a leading quote mark on text a spreadsheet would
 * run as a formula (a participant's display name is theirs to choose).
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
