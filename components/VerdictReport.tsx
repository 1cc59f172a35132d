"use client";
/**
 * A scenario's verdicts: for each claim of the source article, the quote,
 * what this run measured about it (a badge that reads without colour, the
 * deciding sentence, the numbers) and the participant's committed
 * prediction beside it. The header says honestly what the run ran on.
 */
import { useContext, useState } from "react";
import type { VerdictReport as Report, VerdictValue } from "../server/core/protocol/verdict-model";
import { formatCommittedAt, PredictionsContext, type ClaimPrediction } from "./model/predictions";

import "./VerdictReport.css";

interface Props {
  report: Report;
}

type Claim = Report["claims"][number];
type NumberValue = Claim["numbers"][number]["value"];

/** Rows of numbers shown before "show all": enough for a comparison, short enough to keep claims side by side. */
const NUMBERS_SHOWN = 8;

const VERDICT_TEXT: Record<VerdictValue | "none", { icon: string; text: string }> = {
  holds: { icon: "✓", text: "holds" },
  "does-not-hold": { icon: "✗", text: "does not hold" },
  partly: { icon: "◐", text: "holds only partly" },
  inconclusive: { icon: "≈", text: "inconclusive" },
  none: { icon: "?", text: "no verdict" },
};

export default function VerdictReport({ report }: Props) {
  const failed = report.experiments.filter((e) => e.error !== null);
  const titles = new Map(report.experiments.map((e) => [e.id, e.title]));
  const params = Object.entries(report.params);
  return (
    <section className="verdict-report" data-testid="verdict-report" data-scenario={report.scenario} aria-label={`Verdicts: ${report.title}`}>
      <header className="verdict-header">
        <h3 className="verdict-title">{report.title}</h3>
        <div className="verdict-meta">
          <span>
            Source: <cite>{report.source}</cite>
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
        <ClaimCard key={claim.id} claim={claim} experimentTitle={titles.get(claim.experiment) ?? claim.experiment} />
      ))}
    </section>
  );
}

function ClaimCard({ claim, experimentTitle }: { claim: Claim; experimentTitle: string }) {
  const predictions = useContext(PredictionsContext).get(claim.id) ?? [];
  const verdict = claim.verdict ?? "none";
  const badge = VERDICT_TEXT[verdict];
  return (
    <article className={`verdict-claim verdict-claim-${verdict}`} data-testid="verdict-claim" data-claim-id={claim.id} data-verdict={verdict}>
      <div className="verdict-claim-main">
        <blockquote className="verdict-quote">{claim.quote}</blockquote>
        <p className="verdict-line">
          <span className={`verdict-badge verdict-badge-${verdict}`} data-testid="verdict-badge">
            <span aria-hidden="true">{badge.icon}</span> {badge.text}
          </span>
          <span className="verdict-explanation">{claim.explanation}</span>
        </p>
        <small className="verdict-experiment">measured by: {experimentTitle}</small>
        {claim.numbers.length > 0 && <NumbersTable numbers={claim.numbers} />}
      </div>
      <PredictionAside predictions={predictions} />
    </article>
  );
}

function PredictionAside({ predictions }: { predictions: readonly ClaimPrediction[] }) {
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
        <p key={i} title={`${p.question} (committed ${formatCommittedAt(p.committedAt)})`} data-after-run={p.afterRun}>
          {p.afterRun ? "Your answer" : "Your prediction"}: <strong>{p.choice}</strong>
          {p.afterRun && <small className="prediction-late"> (given after the experiment had run)</small>}
        </p>
      ))}
    </aside>
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
            <tr key={`${n.label}-${i}`} data-testid="verdict-number">
              <th scope="row">{n.label}</th>
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
