"use client";
/**
 * A running cell's clock: elapsed time, ticking each second, and once the
 * cell's output shows an `n/total` counter (tqdm, "step 3/10"), the estimate
 * of the time left (model/eta.ts). It counts from when this page saw the run
 * start; the final duration comes from the server when the run ends.
 */
import { useMemo, useState } from "react";
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { useNow } from "../shell/use-now";
import { clockText, etaMs, lastProgress } from "./model/eta";

interface Props {
  outputs: readonly CellOutput[];
}

export default function RunTimer({ outputs }: Props) {
  const [startedAt] = useState(() => Date.now());
  const now = useNow(1000);
  const progress = useMemo(() => lastProgress(streamText(outputs)), [outputs]);
  const elapsed = now - startedAt;
  const eta = etaMs(elapsed, progress);
  return (
    <span className="run-timer" data-testid="run-timer" data-elapsed-s={Math.floor(elapsed / 1000)}>
      {clockText(elapsed)}
      {progress !== null && (
        <span className="run-eta" data-testid="run-eta">
          {" "}· {progress.done}/{progress.total}
          {eta !== null && ` · about ${clockText(eta)} left`}
        </span>
      )}
    </span>
  );
}

/** The live console text (the last outputs are enough: the newest counter is at the end). */
function streamText(outputs: readonly CellOutput[]): string {
  let text = "";
  for (let i = outputs.length - 1; i >= 0 && text.length < 4096; i--) {
    const o = outputs[i];
    if (o?.kind === "stream") text = o.text + text;
  }
  return text;
}
