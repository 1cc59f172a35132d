"use client";
/**
 * A message to every participant, a parameter preset for one scenario
 * ("name=value" lines; each participant chooses to apply it), or both.
 * The parent remounts it (a new key) after each broadcast sent, which clears it.
 */
import { useState, type FormEvent } from "react";
import { broadcastCommand, type BroadcastDraft } from "./model/broadcast-form";

import "./Broadcasts.css";

interface Props {
  scenarios: ReadonlyArray<{ id: string; title: string }>;
  busy: boolean;
  onSend(draft: BroadcastDraft): Promise<boolean>;
}

export default function BroadcastForm({ scenarios, busy, onSend }: Props) {
  const [draft, setDraft] = useState<BroadcastDraft>({ message: "", scenarioId: "", preset: "" });
  // Checked here only to disable the button; the controller checks again and says why.
  const ready = broadcastCommand("-", draft).ok;

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy) return;
    void onSend(draft);
  };

  return (
    <form className="broadcast-form" data-testid="broadcast-form" onSubmit={submit}>
      <label className="broadcast-field">
        <span>Message</span>
        <textarea
          data-testid="broadcast-message"
          rows={2}
          maxLength={2_000}
          placeholder="e.g. Try devices=2 next, then compare the speed-up."
          value={draft.message}
          onChange={(e) => setDraft({ ...draft, message: e.target.value })}
        />
      </label>
      <div className="broadcast-preset">
        <label className="broadcast-field">
          <span>Preset for</span>
          <select data-testid="broadcast-scenario" value={draft.scenarioId} onChange={(e) => setDraft({ ...draft, scenarioId: e.target.value })}>
            <option value="">no preset</option>
            {scenarios.map((scenario) => (
              <option key={scenario.id} value={scenario.id}>
                {scenario.title}
              </option>
            ))}
          </select>
        </label>
        <label className="broadcast-field broadcast-field-wide">
          <span>Values, one name=value a line (numbers, true/false, else text)</span>
          <textarea
            data-testid="broadcast-preset"
            rows={3}
            placeholder={"devices=2\ncompare_ddp=false"}
            disabled={draft.scenarioId === ""}
            value={draft.preset}
            onChange={(e) => setDraft({ ...draft, preset: e.target.value })}
          />
        </label>
      </div>
      <button type="submit" className="button button-primary" data-testid="broadcast-send" disabled={busy || !ready}>
        Broadcast
      </button>
    </form>
  );
}
