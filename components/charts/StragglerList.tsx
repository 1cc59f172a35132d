"use client";
/** Ranks flagged as stragglers, with the rule that flagged them stated beside the list. */
import { memo } from "react";
import { STRAGGLER_RULE, type Straggler } from "../../server/core/charts/chart-stragglers";

interface Props {
  flagged: readonly Straggler[];
}

function StragglerList({ flagged }: Props) {
  return (
    <section className="chart-stragglers" data-testid="chart-stragglers">
      <h4 className="chart-title">Stragglers</h4>
      {flagged.length === 0 ? (
        <p className="chart-none">No straggler.</p>
      ) : (
        <ul>
          {flagged.map((s) => (
            <li key={`${s.tag}\u0000${s.rank}`} className="straggler-flag" data-testid="straggler-flag" data-variant={s.tag} data-rank={s.rank}>
              {s.label}, rank {s.rank}: {s.metric} median {s.meanMs.toFixed(2)} ms, {Math.round(s.excess * 100)} % above the variant&apos;s
              median {s.medianMs.toFixed(2)} ms
            </li>
          ))}
        </ul>
      )}
      <p className="chart-note">{STRAGGLER_RULE}</p>
    </section>
  );
}

export default memo(StragglerList);
