/**
 * A scenario's verdict report: what `mgpulab_scenarios.show_verdicts` emits
 * as a display output under VERDICTS_MIME (with a text/plain rendering for
 * other notebook tools). Validated before the UI trusts it: it is kernel output.
 *
 * The Python side is `kernels/mgpulab_scenarios/report.py` (`verdict_report`);
 * `kernels/protocol/verdict-report.json` is a report it produced, which both
 * test suites check against this schema (nothing in it may be unknown here).
 * Fields added with issue 13 are optional: reports stored before it lack them.
 */
import { z } from "zod";

/** `inconclusive`: the measurement cannot decide (the spread is as large as the effect, or this host cannot show it). */
export const VERDICTS = ["holds", "does-not-hold", "partly", "inconclusive"] as const;
export type VerdictValue = (typeof VERDICTS)[number];

/**
 * A claim's (or experiment's) status: `measured` (it has a verdict), `needs-run` (its experiment cell has
 * not run with the values shown; the explanation names the cell to run), `failed` (its experiment failed).
 */
export const CLAIM_STATUSES = ["measured", "needs-run", "failed"] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

/** How a number is computed from its cell's stored metric series (see kernels/mgpulab_scenarios/observed.py `Source`). */
export const NUMBER_STATISTICS = ["mean", "peak", "first", "last", "value", "min", "median", "max", "speedup"] as const;

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const numberSourceSchema = z.object({
  /** The variant tag (run id) of the series; "" when untagged. */
  tag: z.string(),
  metric: z.string(),
  ranks: z.array(z.number().int()),
  steps: z.array(z.number().int()),
  statistic: z.enum(NUMBER_STATISTICS),
  /** speedup only: the one-device variant it is measured against, per sample or per step. */
  baseline: z.string().optional(),
  basis: z.enum(["sample", "step"]).optional(),
});

/** Which cell and execution a claim's numbers came from, and the parameter values it ran with. */
const runRefSchema = z.object({
  templateId: z.string(),
  cellId: z.string().nullable(),
  executionId: z.string().nullable(),
  count: z.number().int().nullable(),
  recordedAt: z.string(),
  params: z.record(z.string(), scalar),
});

/** A timing's repeats after the warm-up: how many, min / median / max, and their mean (the chart's). */
const spreadSchema = z.object({
  label: z.string(),
  n: z.number().int(),
  min: z.number(),
  median: z.number(),
  max: z.number(),
  mean: z.number(),
});

/**
 * `scenario`: the verdicts cell's report (every claim of the scenario). `step`: what one experiment cell
 * decided, shown under it as it ends (the same judgement, restricted to that experiment's claims).
 */
export const REPORT_SCOPES = ["scenario", "step"] as const;

export const verdictReportSchema = z.object({
  /** Absent in reports from before step judgements: a scenario report. */
  scope: z.enum(REPORT_SCOPES).optional(),
  scenario: z.string(),
  title: z.string(),
  /** The article's file name in the seeds folder. */
  source: z.string(),
  /** The article's own title, what a reader is shown (absent in reports from before it). */
  sourceTitle: z.string().optional(),
  deviceMode: z.string(),
  params: z.record(z.string(), scalar),
  experiments: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      variants: z.array(z.string()),
      seconds: z.number(),
      error: z.string().nullable(),
      status: z.enum(CLAIM_STATUSES).optional(),
      /** Whether a claim reads this experiment (a cell without claims is never waited for). */
      needed: z.boolean().optional(),
      run: runRefSchema.nullable().optional(),
      /** Rank stacks this experiment printed on purpose (it makes a rank hang): the UI folds them as expected. */
      expectedStacks: z.string().nullable().optional(),
    }),
  ),
  claims: z.array(
    z.object({
      id: z.string(),
      quote: z.string(),
      experiment: z.string(),
      /** null: no verdict — the experiment failed or needs to run (see `status`), never a made-up one. */
      verdict: z.enum(VERDICTS).nullable(),
      status: z.enum(CLAIM_STATUSES).optional(),
      /** One sentence with the deciding numbers (or the cell to run). */
      explanation: z.string(),
      /** The experiment's evidence flattened to labelled scalars ("samples_per_device[2]" → 16); a number read from a metric series says how. */
      numbers: z.array(z.object({ label: z.string(), value: scalar.nullable(), source: numberSourceSchema.optional() })),
      spreads: z.array(spreadSchema).optional(),
      run: runRefSchema.nullable().optional(),
    }),
  ),
});
export type VerdictReport = z.infer<typeof verdictReportSchema>;
