"use client";
/** Where a led workshop's unrevealed steps would be: one line instead of their cells. */
import "./StepHidden.css";

export default function StepHidden({ cells }: { cells: number }) {
  return (
    <div className="step-hidden" data-testid="step-hidden" data-cells={cells} role="note">
      The next step appears when your facilitator reveals it
    </div>
  );
}
