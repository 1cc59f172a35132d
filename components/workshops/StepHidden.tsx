"use client";
/**
 * Where a led workshop's unrevealed steps would be: what comes next and how
 * much is left, instead of their cells, so a participant knows more is on
 * its way and waits for it rather than thinking they are done.
 */
import "./StepHidden.css";

interface Props {
  /** Hidden cells (the server refuses to run them). */
  cells: number;
  /** The next step: its 1-based number, the notebook's step count, and its title; null when not known. */
  next: { number: number; count: number; title: string } | null;
}

export default function StepHidden({ cells, next }: Props) {
  const after = next === null ? 0 : next.count - next.number;
  return (
    <div className="step-hidden" data-testid="step-hidden" data-cells={cells} data-next-step={next?.number ?? ""} role="note">
      {next === null ? (
        <>More steps follow: each appears here when your facilitator reveals it.</>
      ) : (
        <>
          <strong>Next: step {next.number} of {next.count}, {next.title}.</strong> It appears here when your facilitator reveals it
          {after > 0 ? ` (then ${after} more)` : ""}.
        </>
      )}
    </div>
  );
}
