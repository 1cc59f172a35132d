"use client";
/**
 * The kernel's state, said plainly: what runs it (CPU or GPU, from the
 * kernel's own report), why it died with a way to restart it, why it waits
 * for a GPU (its place, or the refusal with who holds them) with a Retry, and
 * a link to its host that does not answer.
 */
import type { KernelStatus } from "../../server/core/protocol/notebook-model";
import type { HostView } from "../../server/core/protocol/hosts-model";
import { deviceSummary, kernelDetails } from "../shell/model/format";
import { kernelPlacementText, linkTroubleText, queueText, refusalText } from "../hosts/model/kernel-spec";
import { assertNever } from "../../server/core/assert-never";

import "./KernelStatusBadge.css";

interface Props {
  status: KernelStatus;
  /** False while the page is not connected: the status shown is the last one known. */
  live: boolean;
  /** The lab's hosts when listed: leased GPUs are named by them. */
  hosts?: readonly HostView[] | null;
  /** Null for a viewer who may not run this notebook: no restart button. */
  onRestart: (() => void) | null;
}

export default function KernelStatusBadge({ status, live, hosts = null, onRestart }: Props) {
  const label = stateLabel(status);
  const info = "info" in status ? status.info : null;
  const device = info === null ? null : deviceSummary(info);
  const placement = info === null ? null : kernelPlacementText(info, hosts);
  const queue = queueText(status);
  const refusal = refusalText(status);
  const trouble = linkTroubleText(status);
  const title = info === null ? [label, queue, refusal].filter((part) => part !== null).join(" ") : kernelDetails(info);
  return (
    <div
      className={`kernel-status kernel-${status.state}${live ? "" : " kernel-stale"}`}
      data-testid="kernel-status"
      data-state={status.state}
      data-live={live}
      title={live ? title : `Last known state (not connected)\n${title}`}
    >
      <span className="kernel-dot" aria-hidden="true" />
      <span className="kernel-label">{label}</span>
      {device !== null && info !== null && (
        <>
          <span className={`device-kind device-${device.kind.toLowerCase()}`} data-testid="kernel-device" data-device-kind={device.kind}>
            {device.kind}
          </span>
          <span className="kernel-info" data-testid="kernel-info">
            {placement?.host != null && <span data-testid="kernel-host">{placement.host} · </span>}
            {placement?.gpus != null && (
              <span data-testid="kernel-gpus" title={placement.gpus.title}>
                {placement.gpus.text} ·{" "}
              </span>
            )}
            {device.text} · Python {info.python} · {info.torch === null ? "no torch" : `torch ${info.torch}`}
          </span>
        </>
      )}
      {trouble !== null && status.state !== "refused" && "link" in status && status.link && (
        <span className="kernel-link" data-testid="kernel-link" data-link-state={status.link.state}>
          {trouble}
        </span>
      )}
      {queue !== null && (
        <span className="kernel-info" data-testid="kernel-queue">
          {queue}
        </span>
      )}
      {refusal !== null && (
        <span className="kernel-note" data-testid="kernel-refusal">
          {refusal}
        </span>
      )}
      {status.state === "dead" && (
        <>
          <span className="kernel-reason" data-testid="kernel-dead-reason">
            {status.reason}
          </span>
          <span className="kernel-note" data-testid="kernel-dead-hint">
            Running a cell starts a new kernel (its variables are gone).
          </span>
          {status.lastOutput.trim() !== "" && (
            <details className="kernel-last-output">
              <summary>last output</summary>
              <pre>{status.lastOutput}</pre>
            </details>
          )}
        </>
      )}
      {status.state === "shutdown" && status.reason !== null && (
        <span className="kernel-note" data-testid="kernel-shutdown-reason">
          {status.reason}
        </span>
      )}
      {(status.state === "dead" || status.state === "shutdown" || status.state === "refused") && onRestart !== null && (
        <button type="button" className="button button-primary" data-testid="kernel-restart" disabled={!live} onClick={onRestart}>
          {status.state === "dead" ? "Restart kernel" : status.state === "refused" ? "Retry" : "Start kernel"}
        </button>
      )}
    </div>
  );
}

function stateLabel(status: KernelStatus): string {
  switch (status.state) {
    case "not-started":
      return "Kernel not started";
    case "starting":
      return "Kernel starting…";
    case "idle":
      return "Idle";
    case "busy":
      return "Busy";
    case "interrupting":
      return "Interrupting…";
    case "restarting":
      return "Restarting…";
    case "refused":
      return "Waiting for a GPU:";
    case "dead":
      return "Kernel died:";
    case "shutdown":
      return "Kernel shut down";
    default:
      return assertNever(status);
  }
}
