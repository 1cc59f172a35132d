"use client";
/**
 * A scenario's verdicts: for each claim of the source article, the quote,
 * what the participant's own run measured about it (a badge that reads
 * without colour, the deciding sentence, the numbers with the run they came
 * from and the spread of repeated timings), and the prediction about that
 * claim beside it, judged right or wrong. The header says honestly what the
 * run ran on. A claim whose experiment cell has not run with the values
 * shown says which cell to run: never a verdict from another run.
 */
import { useContext, useMemo, useState } from "react";
import type { VerdictReport as Report, VerdictValue } from "../../server/core/protocol/verdict-model";
import Markdown from "../shell/Markdown";
import { AskedClaimsContext, formatCommittedAt, judgePrediction, PredictionsContext, type ClaimPrediction } from "./model/predictions";

import "./VerdictReport.css";

interface Props {
  report: Report;
}

type Claim = Report["claims"][number];
type Experiment = Report["experiments"][number];
type NumberRow = Claim["numbers"][number];
type NumberValue = NumberRow["value"];
type RunRef = NonNullable<Claim["run"]>;
type Spread = NonNullable<Claim["spreads"]>[number];

/** Rows of numbers shown before "show all": enough for a comparison, short enough to keep claims side by side. */
const NUMBERS_SHOWN = 8;

type BadgeKind = VerdictValue | "needs-run" | "failed" | "none";

const BADGE: Record<BadgeKind, { icon: string; text: string }> = {
  holds: { icon: "✓", text: "holds" },
  "does-not-hold": { icon: "✗", text: "does not hold" },
  partly: { icon: "◐", text: "holds only partly" },
  inconclusive: { icon: "≈", text: "inconclusive" },
  "needs-run": { icon: "▷", text: "needs a run" },
  failed: { icon: "!", text: "experiment failed" },
  none: { icon: "?", text: "no verdict" },
};

/** What a claim's badge says: its verdict, or why it has none (reports from before statuses say only "no verdict"). */
export function claimBadge(claim: Claim): BadgeKind {
  if (claim.verdict !== null) return claim.verdict;
  if (claim.status === "needs-run" || claim.status === "failed") return claim.status;
  return "none";
}

export default function VerdictReport({ report }: Props) {
  const failed = report.experiments.filter((e) => e.error !== null);
  const experiments = new Map(report.experiments.map((e) => [e.id, e]));
  const params = Object.entries(report.params);
  const verdicts = useMemo(() => new Map(report.claims.map((c) => [c.id, c.verdict])), [report]);
  const verdictOf = (claimId: string) => verdicts.get(claimId) ?? null;
  const withStacks = report.experiments.filter((e) => typeof e.expectedStacks === "string" && e.expectedStacks !== "");
  // An experiment cell's own claims, judged as it ended: the claims and the predictions, without the scenario's header.
  const step = report.scope === "step";
  return (
    <section
      className={step ? "verdict-report verdict-report-step" : "verdict-report"}
      data-testid="verdict-report"
      data-scope={report.scope ?? "scenario"}
      data-scenario={report.scenario}
      aria-label={step ? "What this run measured" : `Verdicts: ${report.title}`}
    >
      {step ? (
        <header className="verdict-step-header">
          <h3 className="verdict-title">What this run measured</h3>
          <small className="verdict-step-note">The claims this step tests, judged from this run; the verdicts cell at the end gathers every step.</small>
        </header>
      ) : (
      <header className="verdict-header">
        <h3 className="verdict-title">{report.title}</h3>
        <div className="verdict-meta">
          <span>
            Source: <cite title={report.source}>{report.sourceTitle || report.source}</cite>
          </span>
          <span data-testid="verdict-device">
            Devices: {report.deviceMode}
            {isCpuOnly(report.deviceMode) && <span className="verdict-emulated"> — emulated on CPU, not real GPUs</span>}
          </span>
        </div>
        {params.length > 0 && (
          <ul className="verdict-params" aria-label="Parameters used">
            {params.map(([name, value]) => (
              <li className="verdict-chip" key={name}>
                {name}={formatValue(value)}
              </li>
            ))}
          </ul>
        )}
      </header>
      )}
      {failed.length > 0 && (
        <ul className="verdict-failures" data-testid="verdict-failures">
          {failed.map((e) => (
            <li key={e.id} data-testid="verdict-failure" data-experiment-id={e.id}>
              Experiment <strong>{e.title}</strong> failed: <code>{e.error}</code>
            </li>
          ))}
        </ul>
      )}
      {report.claims.length === 0 && <p className="verdict-empty">No claims were checked in this run.</p>}
      {report.claims.map((claim) => (
        <ClaimCard key={claim.id} claim={claim} experiment={experiments.get(claim.experiment) ?? null} verdictOf={verdictOf} />
      ))}
      {withStacks.map((e) => (
        <details className="verdict-stacks" key={e.id} data-testid="verdict-expected-stacks" data-experiment-id={e.id}>
          <summary>stacks (expected: this experiment makes a rank hang) — {e.title}</summary>
          <pre className="verdict-stacks-text">{e.expectedStacks}</pre>
        </details>
      ))}
    </section>
  );
}

function ClaimCard({ claim, experiment, verdictOf }: { claim: Claim; experiment: Experiment | null; verdictOf(claimId: string): VerdictValue | null }) {
  const predictions = useContext(PredictionsContext).get(claim.id) ?? [];
  // A claim no question asks about has no prediction to show, and no empty box for one.
  const asked = useContext(AskedClaimsContext);
  const badge = claimBadge(claim);
  const run = claim.run ?? experiment?.run ?? null;
  return (
    <article
      className={`verdict-claim verdict-claim-${badge}`}
      data-testid="verdict-claim"
      data-claim-id={claim.id}
      data-verdict={claim.verdict ?? "none"}
      data-status={claim.status ?? (claim.verdict === null ? "none" : "measured")}
      data-execution-id={run?.executionId ?? undefined}
    >
      <div className="verdict-claim-main">
        <Markdown as="blockquote" className="verdict-quote" source={claim.quote} />
        <p className="verdict-line">
          <span className={`verdict-badge verdict-badge-${badge}`} data-testid="verdict-badge">
            <span aria-hidden="true">{BADGE[badge].icon}</span> {BADGE[badge].text}
          </span>
          <Markdown inline className="verdict-explanation" source={claim.explanation} testId="verdict-explanation" />
        </p>
        <small className="verdict-experiment" data-testid="verdict-source">
          measured by: {experiment?.title ?? claim.experiment}
          {run !== null && <RunLine run={run} />}
        </small>
        {claim.spreads && claim.spreads.length > 0 && <SpreadTable spreads={claim.spreads} />}
        {claim.numbers.length > 0 && <NumbersTable numbers={claim.numbers} />}
      </div>
      {(predictions.length > 0 || asked === null || asked.has(claim.id)) && <PredictionAside predictions={predictions} verdictOf={verdictOf} />}
    </article>
  );
}

/** Which run the numbers are from: the cell's execution count, when, and the values it ran with. */
function RunLine({ run }: { run: RunRef }) {
  const params = Object.entries(run.params);
  return (
    <span className="verdict-run" data-testid="verdict-run" data-cell-id={run.cellId ?? undefined}>
      {" "}
      — its run {run.count !== null ? `[${run.count}] ` : ""}at <time dateTime={run.recordedAt}>{formatCommittedAt(run.recordedAt)}</time>
      {params.length > 0 && ` with ${params.map(([name, value]) => `${name}=${formatValue(value)}`).join(", ")}`}
    </span>
  );
}

function PredictionAside({ predictions, verdictOf }: { predictions: readonly ClaimPrediction[]; verdictOf(claimId: string): VerdictValue | null }) {
  if (predictions.length === 0) {
    return (
      <aside className="verdict-prediction verdict-prediction-none" data-testid="verdict-prediction" data-committed="false">
        no prediction committed
      </aside>
    );
  }
  return (
    <aside className="verdict-prediction" data-testid="verdict-prediction" data-committed="true">
      {predictions.map((p, i) => (
        <PredictionLine key={i} prediction={p} verdictOf={verdictOf} />
      ))}
    </aside>
  );
}

function PredictionLine({ prediction: p, verdictOf }: { prediction: ClaimPrediction; verdictOf(claimId: string): VerdictValue | null }) {
  const outcome = judgePrediction(p, verdictOf);
  const judged = outcome.kind === "judged" ? (outcome.right ? "right" : "wrong") : outcome.kind;
  return (
    <div className="verdict-prediction-item" data-testid="verdict-prediction-item" data-outcome={judged} title={`${p.question} (committed ${formatCommittedAt(p.committedAt)})`} data-after-run={p.afterRun}>
      <p>
        {p.afterRun ? "You answered" : "You predicted"}: <strong>{p.choice}</strong>
        {p.afterRun && <small className="prediction-late"> (given after the experiment had run)</small>}
      </p>
      {outcome.kind === "judged" && (
        <p>
          Measured: <strong>{outcome.measured}</strong>{" "}
          <span className={`prediction-judgement prediction-${judged}`} data-testid="prediction-judgement">
            <span aria-hidden="true">{outcome.right ? "✓" : "✗"}</span> {outcome.right ? "right" : "wrong"}
          </span>
        </p>
      )}
      {outcome.kind === "undecided" && <p className="prediction-undecided">Not judged: {outcome.reason}.</p>}
    </div>
  );
}

/** Repeated timings after the warm-up: the spread a verdict about speed has to beat. */
function SpreadTable({ spreads }: { spreads: readonly Spread[] }) {
  return (
    <table className="verdict-numbers verdict-spreads" data-testid="verdict-spreads">
      <caption>repeats after warm-up</caption>
      <thead>
        <tr>
          <th scope="col"></th>
          <th scope="col">n</th>
          <th scope="col">min</th>
          <th scope="col">median</th>
          <th scope="col">max</th>
        </tr>
      </thead>
      <tbody>
        {spreads.map((s) => (
          <tr key={s.label} data-testid="verdict-spread" data-label={s.label}>
            <th scope="row">{s.label}</th>
            <td>{s.n}</td>
            <td>{formatValue(s.min)}</td>
            <td>{formatValue(s.median)}</td>
            <td>{formatValue(s.max)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NumbersTable({ numbers }: { numbers: Claim["numbers"] }) {
  const [expanded, setExpanded] = useState(false);
  const rows = expanded ? numbers : numbers.slice(0, NUMBERS_SHOWN);
  return (
    <div className="verdict-numbers-wrap">
      <table className="verdict-numbers" data-testid="verdict-numbers">
        <tbody>
          {rows.map((n, i) => (
            <tr
              key={`${n.label}-${i}`}
              data-testid="verdict-number"
              data-label={n.label}
              data-value={typeof n.value === "number" ? String(n.value) : undefined}
              data-source={n.source ? JSON.stringify(n.source) : undefined}
            >
              <th scope="row" title={n.source ? describeSource(n.source) : undefined}>
                {n.label}
              </th>
              <td>{formatValue(n.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {numbers.length > NUMBERS_SHOWN && (
        <button type="button" className="button verdict-numbers-toggle" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
          {expanded ? "show fewer" : `show all ${numbers.length}`}
        </button>
      )}
    </div>
  );
}

/** Where a number was read from, as the charts show it ("mean of step_ms, steps 2–20, rank 0, DataParallel x2"). */
function describeSource(source: NonNullable<NumberRow["source"]>): string {
  const steps = source.steps.length === 0 ? "" : source.steps.length === 1 ? `, step ${source.steps[0]}` : `, steps ${source.steps[0]}–${source.steps[source.steps.length - 1]}`;
  const ranks = source.ranks.length === 0 ? "" : `, rank${source.ranks.length > 1 ? "s" : ""} ${source.ranks.join(", ")}`;
  const against = source.baseline ? ` against ${source.baseline}` : "";
  return `${source.statistic} of ${source.metric}${steps}${ranks}, ${source.tag === "" ? "the cell's run" : source.tag}${against}`;
}

// The kernel's device labels say "cpu" for emulated devices ("2× cpu, DDP over gloo …") and "CUDA" for real ones.
function isCpuOnly(deviceMode: string): boolean {
  return /\bcpu\b/i.test(deviceMode) && !/cuda/i.test(deviceMode.replace(/no\s+cuda/gi, ""));
}

/** A number as people compare them: integers whole (grouped from 10,000), the rest to 4 significant digits. */
function formatValue(value: NumberValue): string {
  if (value === null) return "—";
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (Number.isInteger(value)) return abs >= 10_000 ? value.toLocaleString("en-US") : String(value);
  if (abs >= 10_000) return Math.round(value).toLocaleString("en-US");
  if (abs < 1e-3) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}
