"use client";
/**
 * The guided scenarios (one per source article): each opens as a notebook
 * with its explanation, claims, experiments and a verdicts cell. A scenario
 * the user already has a copy of asks first: that copy, or a fresh one.
 */
import { useEffect, useState } from "react";
import type { ScenarioSummary } from "../../server/core/protocol/notebook-model";
import { formatRelativeTime } from "../shell/model/format";
import type { LabTransport } from "../shell/model/lab-client";
import { openScenario, startFreshCopy, type ScenarioOpening } from "./model/scenario-opening";

import "./ScenarioPicker.css";

interface Props {
  transport: LabTransport;
}

type Listing = { status: "loading" } | { status: "ready"; scenarios: ScenarioSummary[] } | { status: "error"; error: string };

export default function ScenarioPicker({ transport }: Props) {
  const [listing, setListing] = useState<Listing>({ status: "loading" });
  const [opening, setOpening] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void transport.send({ op: "list-scenarios" }).then((ack) => {
      if (!live) return;
      setListing(ack.ok ? { status: "ready", scenarios: ack.scenarios } : { status: "error", error: ack.error });
    });
    return () => {
      live = false;
    };
  }, [transport]);

  const [choice, setChoice] = useState<Extract<ScenarioOpening, { kind: "choose" }> | null>(null);

  const follow = (scenarioId: string, next: (transport: LabTransport, scenarioId: string) => Promise<ScenarioOpening>): void => {
    setOpening(scenarioId);
    setError(null);
    setChoice(null);
    void next(transport, scenarioId).then((outcome) => {
      if (outcome.kind === "open") {
        window.location.assign(`/notebooks/${encodeURIComponent(outcome.notebookId)}`);
        return;
      }
      setOpening(null);
      if (outcome.kind === "choose") setChoice(outcome);
      else setError(outcome.error);
    });
  };

  const openExisting = (notebookId: string): void => {
    setOpening(choice?.scenarioId ?? null);
    window.location.assign(`/notebooks/${encodeURIComponent(notebookId)}`);
  };

  return (
    <section className="scenario-picker" data-testid="scenario-picker" data-status={listing.status}>
      <h2>Guided scenarios</h2>
      <p className="scenario-intro">Each one states an article&apos;s claims, asks you to predict, runs the experiments here and computes every verdict from the measured numbers.</p>
      {listing.status === "loading" && <p className="list-empty">Loading scenarios…</p>}
      {listing.status === "error" && <p className="list-error" role="alert">Scenarios are unavailable: {listing.error}</p>}
      {error !== null && <p className="list-error" role="alert">Could not open the scenario: {error}</p>}
      {listing.status === "ready" && (
        <ul className="scenario-rows">
          {listing.scenarios.map((scenario) => (
            <li key={scenario.id} className="scenario-row" data-testid="scenario" data-scenario-id={scenario.id}>
              <div className="scenario-text">
                <strong>{scenario.title}</strong>
                <span className="scenario-summary">{scenario.summary}</span>
                <span className="scenario-source" data-testid="scenario-source" title={scenario.source}>
                  article: <cite>{scenario.sourceTitle || scenario.source}</cite> <span className="scenario-source-file">({scenario.source})</span>
                </span>
              </div>
              {choice?.scenarioId === scenario.id ? (
                <div className="scenario-choice" data-testid="scenario-choice" role="group" aria-label="You already have a copy of this scenario">
                  <button type="button" className="button button-primary" data-testid="scenario-open-existing" onClick={() => openExisting(choice.existing.id)}>
                    Open your existing copy ‘{choice.existing.title}’
                    <small className="scenario-choice-when">
                      {" "}
                      (last edited <time dateTime={choice.existing.updatedAt}>{formatRelativeTime(choice.existing.updatedAt, Date.now())}</time>)
                    </small>
                  </button>
                  <button type="button" className="button" data-testid="scenario-start-fresh" onClick={() => follow(scenario.id, startFreshCopy)}>
                    Start a fresh copy ‘{choice.freshTitle}’
                  </button>
                  <button type="button" className="button button-small" data-testid="scenario-choice-cancel" onClick={() => setChoice(null)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <button type="button" className="button button-primary" data-testid="scenario-open" disabled={opening !== null} onClick={() => follow(scenario.id, openScenario)}>
                  {opening === scenario.id ? "Opening…" : "Open as notebook"}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
