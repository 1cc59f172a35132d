/**
 * A scenario's verdict report: what `mgpulab_scenarios.show_verdicts` emits
 * as a display output under VERDICTS_MIME (with a text/plain rendering for
 * other notebook tools). Validated before the UI trusts it: it is kernel output.
 */
import { z } from "zod";

export const VERDICTS = ["holds", "does-not-hold", "partly"] as const;
export type VerdictValue = (typeof VERDICTS)[number];

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const verdictReportSchema = z.object({
  scenario: z.string(),
  title: z.string(),
  source: z.string(),
  deviceMode: z.string(),
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  experiments: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      variants: z.array(z.string()),
      seconds: z.number(),
      error: z.string().nullable(),
    }),
  ),
  claims: z.array(
    z.object({
      id: z.string(),
      quote: z.string(),
      experiment: z.string(),
      /** null: the experiment failed, so there is no verdict rather than a made-up one. */
      verdict: z.enum(VERDICTS).nullable(),
      /** One sentence with the deciding numbers. */
      explanation: z.string(),
      /** The experiment's evidence flattened to labelled scalars ("samples_per_device[2]" → 16). */
      numbers: z.array(z.object({ label: z.string(), value: scalar })),
    }),
  ),
});
export type VerdictReport = z.infer<typeof verdictReportSchema>;
