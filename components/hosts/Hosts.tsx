"use client";
/**
 * The hosts page: one card per configured kernel host — its link and why it
 * failed (with what the link printed), its agent and what it took from the
 * hosts file, its Python/torch/CUDA, its GPUs with who holds each since when
 * (or whom a free one is reserved for), the GPU queue, and "Check now". A
 * host left out for its entry's problems shows them. Behaviour is in
 * HostsController; each card's words come from hostCard().
 */
import "../shell/browser-setup";
import Link from "next/link";
import ListError from "../shell/ListError";
import { SocketLabTransport } from "../shell/model/lab-client";
import { useNow } from "../shell/use-now";
import { useStartedController } from "../shell/use-started-controller";
import { hostCard, HostsController, type HostCard, type UserCell } from "./model/hosts";

import "./Hosts.css";

/** How often "checked 3 min ago" and uptimes move on between refreshes. */
const CLOCK_MS = 10_000;

export default function Hosts() {
  const [controller, state] = useStartedController(() => new HostsController(new SocketLabTransport()));
  // Each new answer is read against the clock it arrived with.
  const now = useNow(CLOCK_MS, state.hosts);

  return (
    <section className="hosts" data-testid="hosts" data-status={state.status}>
      <ListError error={state.error} testId="hosts-error" onDismiss={() => controller.dismissError()} />
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
      {card.problem !== null && (
        <div className="host-error" data-testid="host-problem">
          <span>This host&apos;s entry in the hosts file fails its check:</span>
          <ul>
            {card.problem.map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </div>
      )}
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
      {card.settingsNotes.length > 0 && (
        <ul className="host-settings" data-testid="host-settings">
          {card.settingsNotes.map((note) => (
            <li key={note.text} className={note.applied ? undefined : "host-settings-kept"}>
              {note.text}
            </li>
          ))}
        </ul>
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
                <td data-testid="host-gpu-use">
                  {gpu.heldBy !== null ? (
                    <>
                      <Who user={gpu.heldBy} testId="host-gpu-holder" />
                      {gpu.heldBy.since !== null && <span className="host-since"> since {gpu.heldBy.since}</span>}
                    </>
                  ) : gpu.reserved !== null ? (
                    <span className="host-reserved" data-testid="host-gpu-reserved">
                      {gpu.reserved.text}
                    </span>
                  ) : (
                    <span className="host-free">free</span>
                  )}
                  {gpu.retiring && <span className="host-retiring"> · leaves when its holder ends (no longer in the hosts file)</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {card.queue.length > 0 && (
        <table className="host-gpus host-queue" data-testid="host-queue">
          <caption>Waiting for GPUs, first come first served</caption>
          <thead>
            <tr>
              <th>#</th>
              <th>Who</th>
              <th>GPUs</th>
              <th>Since</th>
            </tr>
          </thead>
          <tbody>
            {card.queue.map((user) => (
              <tr key={user.place} data-testid="host-queue-entry">
                <td>{user.place}</td>
                <td>
                  <Who user={user} testId="host-queue-who" />
                </td>
                <td>{user.gpus}</td>
                <td>{user.since ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

/** A person's notebook, linked when the viewer may open it. */
function Who({ user, testId }: { user: UserCell; testId: string }) {
  return user.href === null ? (
    <span className="host-held-other" data-testid={testId}>
      {user.who}
    </span>
  ) : (
    <Link href={user.href} data-testid={testId}>
      {user.who}
    </Link>
  );
}
