"use client";
/**
 * The watchdog's report on a cell that made no progress: what every process
 * is doing (one summary line each), their full stacks side by side, and the
 * two ways out.
 */
import type { CellOutput } from "../../server/core/protocol/notebook-model";
import { formatIdle } from "../shell/model/format";
import { RESTART_QUESTION } from "./model/notebook-controller";
import type { RunActions } from "./run-actions";

import "./HangReport.css";

interface Props {
  report: Extract<CellOutput, { kind: "hang" }>;
  actions: RunActions | null;
  /** The cell is still queued or running: Interrupt can reach it. */
  running: boolean;
}

export default function HangReport({ report, actions, running }: Props) {
  const restart = () => {
    if (window.confirm(RESTART_QUESTION)) actions?.restart();
  };
  return (
    <section className="output-hang" data-testid="output-hang" data-answered-by={report.answeredBy} aria-label="No progress">
      <p className="hang-title">
        <strong>No progress for {formatIdle(report.idleMs)}</strong> — stacks of every process:
      </p>
      <ul className="hang-summary" data-testid="hang-summary">
        {report.summary.map((line, i) => (
          <li key={i}>{line}</li>
        ))}
      </ul>
      {report.answeredBy === "tty" && (
        <p className="hang-note" data-testid="hang-tty-note">
          The kernel itself did not answer: these stacks were read from outside it, and its raw stack dump is in the output above.
        </p>
      )}
      {report.processes.length > 0 && (
        <div className="hang-processes">
          {report.processes.map((p) => (
            <div className="hang-process" key={`${p.label}-${p.pid}`} data-testid="hang-process">
              <div className="hang-process-header">
                <span className="hang-process-label">{p.label}</span>
                <span className="hang-process-pid">pid {p.pid}</span>
                <span className={`badge ${p.alive ? "badge-ok" : "badge-bad"}`}>{p.alive ? "alive" : "exited"}</span>
              </div>
              <pre className="hang-stack">{p.stack.trim() === "" ? "(no stack)" : p.stack}</pre>
            </div>
          ))}
        </div>
      )}
      {actions !== null && (
        <div className="hang-actions">
          <button type="button" className="button button-primary" data-testid="hang-interrupt" disabled={!running} onClick={() => actions.interrupt()}>
            Interrupt
          </button>
          <button type="button" className="button" data-testid="hang-restart" onClick={restart}>
            Restart kernel
          </button>
        </div>
      )}
    </section>
  );
}
