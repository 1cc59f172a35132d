"use client";
/**
 * A participant's workshop across the top of their pages: their place in the
 * admission queue; once admitted, the workshop's times, resources and the
 * facilitator's broadcasts (a preset can be applied on the notebook page of
 * its scenario); or that it has ended. What to show is decided in
 * model/participant-workshop.ts; this renders it.
 */
import { useEffect, useState } from "react";
import type { Cell, ParameterValue } from "../../server/core/protocol/notebook-model";
import type { ParticipantWorkshopView, WorkshopBroadcast } from "../../server/core/protocol/workshop-model";
import { COUNTDOWN_FROM_MS, countdownWords, presetCommand, presetValuesText, scheduleWords, unseenBroadcasts, type ParticipantWorkshopState } from "./model/participant-workshop";

import "./WorkshopBanner.css";

/** The open notebook, where a preset of its scenario can be applied. */
export interface PresetTarget {
  notebookId: string;
  cells: readonly Cell[];
  /** Connected and allowed to edit: otherwise the button shows, disabled. */
  canApply: boolean;
  apply(cellId: string, values: Record<string, ParameterValue>): void;
}

interface Props {
  state: ParticipantWorkshopState;
  onHandled(broadcastId: string): void;
  /** On a notebook page; null on the list. */
  target: PresetTarget | null;
  /** Across the top of a notebook (the default), or a card above the notebook list. */
  placement?: "notebook" | "list";
}

export default function WorkshopBanner({ state, onHandled, target, placement = "notebook" }: Props) {
  const frame = placement === "list" ? "participant-banner participant-banner-list" : "participant-banner";
  if (state.status === "loading" || state.status === "none") return null;
  if (state.status === "error") {
    return (
      <div className={`${frame} participant-banner-error`} data-testid="workshop-error" role="alert">
        Could not load your workshop: {state.error}
      </div>
    );
  }
  const { view } = state;
  switch (view.state) {
    case "waiting":
      return (
        <div className={frame} data-testid="workshop-waiting" data-position={view.queuePosition ?? ""} role="status">
          You are number {view.queuePosition ?? "?"} in the queue for <strong>{view.title}</strong>
          {view.waitingBecause ? `: ${view.waitingBecause}` : ""}. This page opens your notebooks as soon as a seat is free.
        </div>
      );
    case "ended":
      return (
        <div className={frame} data-testid="workshop-ended" role="status">
          This workshop has ended. Your notebooks stay readable here; export them as .ipynb from each notebook.
        </div>
      );
    case "admitted":
      return <Admitted frame={frame} view={view} handled={state.handled} onHandled={onHandled} target={target} />;
  }
}

interface AdmittedProps {
  frame: string;
  view: ParticipantWorkshopView;
  handled: ReadonlySet<string>;
  onHandled(broadcastId: string): void;
  target: PresetTarget | null;
}

function Admitted({ frame, view, handled, onHandled, target }: AdmittedProps) {
  const now = useClock(view.endsAt);
  const schedule = scheduleWords(view, now, clockTime);
  const countdown = countdownWords(view.endsAt, now);
  // The newest broadcast not handled yet (handling it clears the earlier ones): the banner stays one line or two.
  const latest = unseenBroadcasts(view.broadcasts, handled)[0];
  return (
    <section className={frame} data-testid="workshop-admitted" aria-label={`Workshop ${view.title}`}>
      <p className="participant-banner-line">
        <strong data-testid="workshop-title">{view.title}</strong>
        {schedule !== "" && <span data-testid="workshop-schedule">{schedule}</span>}
        {countdown !== null && (
          <span className="participant-banner-countdown" data-testid="workshop-countdown">
            {countdown}
          </span>
        )}
        <span className="participant-banner-resources" data-testid="workshop-resources">
          {view.resources}
        </span>
      </p>
      {latest !== undefined && <Broadcast key={latest.id} broadcast={latest} target={target} onHandled={() => onHandled(latest.id)} />}
    </section>
  );
}

interface BroadcastProps {
  broadcast: WorkshopBroadcast;
  target: PresetTarget | null;
  onHandled(): void;
}

function Broadcast({ broadcast, target, onHandled }: BroadcastProps) {
  const { preset } = broadcast;
  const plan = preset !== null && target !== null ? presetCommand(target.notebookId, target.cells, preset) : { kind: "elsewhere" as const };
  return (
    <div className="participant-broadcast" data-testid="workshop-broadcast" data-broadcast-id={broadcast.id} role="status">
      <div className="participant-broadcast-body">
        <p className="participant-broadcast-line">
          <span className="participant-broadcast-from">Your facilitator, {clockTime(broadcast.at)}:</span>
          {broadcast.message !== null && <span className="participant-broadcast-message">{broadcast.message}</span>}
          {preset !== null && (
            <span className="participant-broadcast-preset" data-testid="broadcast-preset" data-scenario-id={preset.scenarioId}>
              values for {preset.scenarioId}: <code>{presetValuesText(preset.values)}</code>
            </span>
          )}
        </p>
        {plan.kind === "apply" && plan.notApplied.length > 0 && (
          <p className="participant-broadcast-note" data-testid="preset-not-applied">
            Not in this notebook&apos;s forms, so not applied: {plan.notApplied.join(", ")}
          </p>
        )}
        {plan.kind === "cannot" && (
          <p className="participant-broadcast-note" data-testid="preset-cannot-apply">
            These values cannot be applied here: {plan.reason}
          </p>
        )}
      </div>
      {plan.kind === "apply" && target !== null && (
        <button
          type="button"
          className="button button-primary"
          data-testid="apply-preset"
          disabled={!target.canApply}
          title="Set these values in this notebook's form (every attached cell of the scenario follows)"
          onClick={() => {
            target.apply(plan.command.cellId, plan.command.values);
            onHandled();
          }}
        >
          Apply these values
        </button>
      )}
      <button type="button" className="button" data-testid="dismiss-broadcast" onClick={onHandled}>
        Dismiss
      </button>
    </div>
  );
}

function clockTime(iso: string): string {
  return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** Now, brought up to date every second once the end is near, every half minute before. */
function useClock(endsAt: string | null): number {
  const [now, setNow] = useState(() => Date.now());
  const near = endsAt !== null && Date.parse(endsAt) - now <= COUNTDOWN_FROM_MS + 60_000;
  useEffect(() => {
    if (endsAt === null) return;
    const timer = setInterval(() => setNow(Date.now()), near ? 1_000 : 30_000);
    return () => clearInterval(timer);
  }, [endsAt, near]);
  return now;
}
