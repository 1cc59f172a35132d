"use client";
/**
 * The guided scenarios (one per source article): each opens as a new
 * notebook with its explanation, claims, experiments and a verdicts cell.
 */
import { useEffect, useState } from "react";
import type { ScenarioSummary } from "../server/core/protocol/notebook-model";
import type { LabTransport } from "./model/lab-client";

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
      setListing(ack.ok ? { status: "ready", scenarios: ack.scenarios ?? [] } : { status: "error", error: ack.error });
    });
    return () => {
      live = false;
    };
  }, [transport]);

  const open = async (scenarioId: string): Promise<void> => {
    setOpening(scenarioId);
    setError(null);
    const ack = await transport.send({ op: "create-from-scenario", scenarioId });
    if (ack.ok && ack.notebook) {
      window.location.assign(`/notebooks/${encodeURIComponent(ack.notebook.id)}`);
      return;
    }
    setOpening(null);
    setError(ack.ok ? "the server created no notebook" : ack.error);
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
                <span className="scenario-source">article: {scenario.source}</span>
              </div>
              <button type="button" data-testid="scenario-open" disabled={opening !== null} onClick={() => void open(scenario.id)}>
                {opening === scenario.id ? "Opening…" : "Open as notebook"}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
