"use client";
/**
 * The hosts page: one card per configured kernel host — its link and why it
 * failed (with what the link printed), its agent, its Python/torch/CUDA, its
 * GPUs and which notebook holds each, and "Check now". Behaviour is in
 * HostsController; each card's words come from hostCard().
 */
import "./browser-setup";
import Link from "next/link";
import { useEffect, useState, useSyncExternalStore } from "react";
import { SocketLabTransport } from "./model/lab-client";
import { hostCard, HostsController, type HostCard } from "./model/hosts";

import "./Hosts.css";

/** How often "checked 3 min ago" and uptimes move on between refreshes. */
const CLOCK_MS = 10_000;

export default function Hosts() {
  const [controller] = useState(() => new HostsController(new SocketLabTransport()));
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    controller.start();
    return () => controller.stop();
  }, [controller]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_MS);
    return () => clearInterval(timer);
  }, []);

  // Each new answer is read against the clock it arrived with.
  useEffect(() => setNow(Date.now()), [state.hosts]);

  return (
    <section className="hosts" data-testid="hosts" data-status={state.status}>
      {state.error !== null && (
        <div className="list-error" data-testid="hosts-error" role="alert">
          <span>{state.error}</span>
          <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => controller.dismissError()}>
            ×
          </button>
        </div>
      )}
      {state.status === "loading" && <p className="list-empty">Loading hosts…</p>}
      {state.hosts !== null && state.hosts.length === 0 && (
        <p className="list-empty" data-testid="hosts-empty">
          This lab runs its kernels without host agents: there is no host to show.
        </p>
      )}
      {state.hosts?.map((view) => (
        <HostCardView key={view.id} card={hostCard(view, now)} checking={state.checking.includes(view.id)} onCheck={() => void controller.check(view.id)} />
      ))}
    </section>
  );
}

interface CardProps {
  card: HostCard;
  checking: boolean;
  onCheck(): void;
}

function HostCardView({ card, checking, onCheck }: CardProps) {
  return (
    <article className="host-card" data-testid="host-card" data-host-id={card.id} data-link={card.link}>
      <header className="host-card-head">
        <h2 className="host-name">{card.label}</h2>
        <span className="host-target">{card.kindAndTarget}</span>
        <span className={`host-link host-link-${card.link}`} data-testid="host-link">
          {card.linkLabel}
        </span>
        <span className="host-checked">{card.checked}</span>
        <button type="button" className="button button-small" data-testid="host-check" disabled={checking} onClick={onCheck}>
          {checking ? "Checking…" : "Check now"}
        </button>
      </header>
      {card.error !== null && (
        <div className="host-error" data-testid="host-error">
          <span>{card.error}</span>
          {card.errorOutput !== null && (
            <details className="host-error-output">
              <summary>what the link printed</summary>
              <pre data-testid="host-error-output">{card.errorOutput}</pre>
            </details>
          )}
        </div>
      )}
      {card.agent !== null && (
        <p className={`host-agent${card.agentSameCode === false ? " host-agent-other" : ""}`} data-testid="host-agent">
          {card.agent}
        </p>
      )}
      <p className="host-software" data-testid="host-software">
        {card.software}
      </p>
      <p className="host-kernels" data-testid="host-kernels">
        {card.gpuSummary} · {card.kernels}
      </p>
      {card.gpus.length > 0 && (
        <table className="host-gpus" data-testid="host-gpus">
          <thead>
            <tr>
              <th>GPU</th>
              <th>Name</th>
              <th>UUID</th>
              <th>Memory used / total</th>
              <th>Utilisation</th>
              <th>Held by</th>
            </tr>
          </thead>
          <tbody>
            {card.gpus.map((gpu) => (
              <tr key={gpu.uuid} data-testid="host-gpu">
                <td>{gpu.index}</td>
                <td>{gpu.name}</td>
                <td title={gpu.uuid}>
                  <code>{gpu.shortUuid}</code>
                </td>
                <td>{gpu.memory}</td>
                <td>{gpu.utilization}</td>
                <td>
                  {gpu.heldBy === null ? (
                    <span className="host-free">free</span>
                  ) : gpu.heldBy.href === null ? (
                    <span className="host-held-other">{gpu.heldBy.title}</span>
                  ) : (
                    <Link href={gpu.heldBy.href} data-testid="host-gpu-holder">
                      {gpu.heldBy.title}
                    </Link>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}
