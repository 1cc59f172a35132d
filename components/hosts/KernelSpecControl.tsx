"use client";
/**
 * "Kernel: <host> · <n> GPUs" in the notebook header, opening a small form:
 * which host the next kernel starts on and how many GPUs it leases. A
 * running kernel keeps what it has: the form says the change applies at the
 * next restart. The server checks the spec (the host exists, no more GPUs
 * than it has) and its refusal is shown in the form.
 */
import { useEffect, useId, useState, type FormEvent } from "react";
import type { HostView } from "../../server/core/protocol/hosts-model";
import type { KernelSpec, KernelStatus } from "../../server/core/protocol/notebook-model";
import { kernelSpecLabel, maxGpusOn, specAppliesLater } from "./model/kernel-spec";

import "./KernelSpecControl.css";

interface Props {
  spec: KernelSpec;
  kernelState: KernelStatus["state"];
  hosts: readonly HostView[] | null;
  disabled: boolean;
  onOpen(): void;
  /** Resolves with the server's refusal, or null once it took the spec. */
  onApply(hostId: string, gpus: number): Promise<string | null>;
}

export default function KernelSpecControl({ spec, kernelState, hosts, disabled, onOpen, onApply }: Props) {
  const [open, setOpen] = useState(false);
  const [hostId, setHostId] = useState(spec.hostId);
  const [gpus, setGpus] = useState(String(spec.gpus));
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const formId = useId();
  const label = kernelSpecLabel(spec, hosts);

  // Opening starts from the notebook's spec as it is now (another tab may have changed it).
  useEffect(() => {
    if (!open) return;
    setHostId(spec.hostId);
    setGpus(String(spec.gpus));
    setError(null);
  }, [open, spec.hostId, spec.gpus]);

  const max = maxGpusOn(hostId, hosts);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const count = Number(gpus);
    if (!Number.isInteger(count) || count < 0 || count > max) {
      setError(`a whole number of GPUs from 0 to ${max}`);
      return;
    }
    setSaving(true);
    const refused = await onApply(hostId, count);
    setSaving(false);
    if (refused === null) setOpen(false);
    else setError(refused);
  };

  const hostChoices = hosts ?? [];
  const listed = hostChoices.some((host) => host.id === hostId);
  return (
    <div className="kernel-spec">
      <button
        type="button"
        className="button kernel-spec-button"
        data-testid="kernel-spec"
        title={`${label}: where this notebook's next kernel starts`}
        aria-expanded={open}
        disabled={disabled}
        onClick={() => {
          if (!open) onOpen();
          setOpen(!open);
        }}
      >
        {label}
      </button>
      {open && (
        <form className="kernel-spec-form" data-testid="kernel-spec-form" aria-label="Kernel host and GPUs" noValidate onSubmit={(event) => void submit(event)}>
          <label htmlFor={`${formId}-host`}>Host</label>
          <select id={`${formId}-host`} data-testid="kernel-spec-host" value={hostId} onChange={(event) => setHostId(event.target.value)}>
            {!listed && <option value={hostId}>{hostId}</option>}
            {hostChoices.map((host) => (
              <option key={host.id} value={host.id}>
                {host.label}
                {host.link === "unreachable" ? " (unreachable)" : ""}
              </option>
            ))}
          </select>
          <label htmlFor={`${formId}-gpus`}>GPUs</label>
          <input
            id={`${formId}-gpus`}
            data-testid="kernel-spec-gpus"
            type="number"
            min={0}
            max={max}
            step={1}
            value={gpus}
            onChange={(event) => setGpus(event.target.value)}
          />
          {specAppliesLater(kernelState) && (
            <p className="kernel-spec-note" data-testid="kernel-spec-later">
              A kernel is running: this applies at the next restart.
            </p>
          )}
          {error !== null && (
            <p className="kernel-spec-error" data-testid="kernel-spec-error" role="alert">
              {error}
            </p>
          )}
          <div className="kernel-spec-actions">
            <button type="button" className="button button-small" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" className="button button-small button-primary" data-testid="kernel-spec-apply" disabled={saving}>
              {saving ? "Saving…" : "Apply"}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
