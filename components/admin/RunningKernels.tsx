"use client";
/**
 * Running kernels (like JupyterLab's running panel): each live kernel with
 * its notebook, state, age, last activity, viewers and memory, and a way to
 * shut one or all down. Behaviour is in RunningKernelsController.
 */
import "../shell/browser-setup";
import Link from "next/link";
import ListError from "../shell/ListError";
import { SocketLabTransport } from "../shell/model/lab-client";
import { useNow } from "../shell/use-now";
import { useStartedController } from "../shell/use-started-controller";
import { kernelRow, RunningKernelsController, summaryLine } from "./model/running-kernels";

import "../notebooks/NotebookRow.css";
import "./RunningKernels.css";

/** How often "3 min ago" is brought up to date between refreshes. */
const CLOCK_MS = 15_000;

export default function RunningKernels() {
  const [controller, state] = useStartedController(() => new RunningKernelsController(new SocketLabTransport(), { confirm: (question) => window.confirm(question) }));
  // Each new listing is read against the clock it arrived with.
  const now = useNow(CLOCK_MS, state.listing);

  const listing = state.listing;
  const kernels = listing?.kernels ?? [];
  return (
    <section className="running-kernels" data-testid="running-kernels" data-status={state.status}>
      <ListError error={state.error} testId="kernels-error" onDismiss={() => controller.dismissError()} />
      {state.status === "loading" && <p className="list-empty">Loading kernels…</p>}
      {listing !== null && (
        <div className="kernels-head">
          <span className="kernels-summary" data-testid="kernels-summary">
            {summaryLine(listing)}
          </span>
          <button
            type="button"
            className="button button-small button-danger"
            data-testid="kernels-shutdown-all"
            disabled={kernels.length === 0}
            onClick={() => void controller.shutdownAll()}
          >
            Shut down all
          </button>
        </div>
      )}
      {listing !== null && kernels.length === 0 && (
        <p className="list-empty" data-testid="kernels-empty">
          No kernel is running. A notebook starts one when you run a cell.
        </p>
      )}
      {kernels.length > 0 && (
        <table className="kernels-table">
          <thead>
            <tr>
              <th>Notebook</th>
              <th>State</th>
              <th>Started</th>
              <th>Last activity</th>
              <th>Viewing</th>
              <th title={listing?.memoryMethod}>Memory</th>
              <th>Idle shutdown</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {kernels.map((kernel) => {
              const row = kernelRow(kernel, now);
              return (
                <tr key={row.kernelRef} className="kernel-row" data-testid="kernel-row" data-notebook-id={kernel.notebookId ?? undefined} data-state={row.state}>
                  <td>
                    {row.href !== null ? (
                      <Link href={row.href} className="notebook-row-title" data-testid="kernel-notebook-link">
                        {row.title}
                      </Link>
                    ) : (
                      <span className="notebook-row-title" data-testid="kernel-notebook-hidden" title="a notebook you may not read: only its owner is shown">
                        {row.title}
                      </span>
                    )}
                  </td>
                  <td>
                    <span className={`kernel-state kernel-${row.state}`} data-testid="kernel-row-state">
                      {row.stateLabel}
                    </span>
                  </td>
                  <td>
                    <time dateTime={kernel.startedAt} title={new Date(kernel.startedAt).toLocaleString()}>
                      {row.started}
                    </time>
                  </td>
                  <td>
                    <time dateTime={kernel.lastActivityAt} title={new Date(kernel.lastActivityAt).toLocaleString()}>
                      {row.lastActivity}
                    </time>
                  </td>
                  <td>{row.viewers}</td>
                  <td data-testid="kernel-row-memory" title={kernel.pid === null ? undefined : `pid ${kernel.pid}`}>
                    {row.memory}
                  </td>
                  <td>{row.idleShutdown}</td>
                  <td>
                    <button
                      type="button"
                      className="button button-small button-danger"
                      data-testid="kernel-shutdown"
                      disabled={state.stopping.includes(row.kernelRef)}
                      onClick={() => void controller.shutdown(kernel)}
                    >
                      {state.stopping.includes(row.kernelRef) ? "Shutting down…" : "Shut down"}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {listing !== null && <p className="kernels-method">Memory: {listing.memoryMethod}.</p>}
    </section>
  );
}
