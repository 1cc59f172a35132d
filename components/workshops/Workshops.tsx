"use client";
/**
 * The facilitator's workshops: each with its join link (copied with one
 * click), its scenarios and who joined, with links to their notebooks; and a
 * form to make one. Behaviour is in WorkshopsController; each workshop's words
 * come from workshopCard().
 */
import "../shell/browser-setup";
import Link from "next/link";
import { useEffect, useState } from "react";
import CopyLinkButton from "../shell/CopyLinkButton";
import ListError from "../shell/ListError";
import { SocketLabTransport } from "../shell/model/lab-client";
import { useStartedController } from "../shell/use-started-controller";
import { workshopCard, WorkshopsController, type WorkshopCard } from "./model/workshops";
import NewWorkshopForm from "./NewWorkshopForm";
import WorkshopSizingNote from "./WorkshopSizingNote";

import "./Workshops.css";

export default function Workshops() {
  const [controller, state] = useStartedController(() => new WorkshopsController(new SocketLabTransport()));
  const [origin, setOrigin] = useState("");

  useEffect(() => setOrigin(window.location.origin), []);

  return (
    <section className="workshops" data-testid="workshops" data-status={state.status}>
      <ListError error={state.error} testId="workshops-error" onDismiss={() => controller.dismissError()} />
      <NewWorkshopForm scenarios={state.scenarios} creating={state.creating} onCreate={(title, ids, fields) => controller.create(title, ids, fields).then((made) => made !== null)} />
      {state.status === "loading" && <p className="list-empty">Loading workshops…</p>}
      {state.status === "ready" && state.workshops.length === 0 && (
        <p className="list-empty" data-testid="workshops-empty">
          No workshops yet. Make one above, then give its join link to the class.
        </p>
      )}
      {state.workshops.map((view) => (
        <WorkshopRow key={view.id} card={workshopCard(view, origin, state.scenarios)} />
      ))}
    </section>
  );
}

function WorkshopRow({ card }: { card: WorkshopCard }) {
  return (
    <article className="workshop-row" data-testid="workshop-row" data-workshop-id={card.id} data-join-code={card.joinCode} data-open={card.open}>
      <header className="workshop-head">
        <h2 className="workshop-title">{card.title}</h2>
        <span className={card.ended || !card.open ? "workshop-closed" : "workshop-status"} data-testid="workshop-status">
          {card.status}
        </span>
        <Link href={card.consoleHref} className="button button-small workshop-console-link" data-testid="workshop-console-link">
          Open console
        </Link>
      </header>
      <div className="workshop-join">
        <span className="workshop-label">Join link</span>
        <a className="workshop-join-link" data-testid="workshop-join-link" href={card.joinUrl}>
          {card.joinUrl}
        </a>
        <CopyLinkButton url={card.joinUrl} testId="workshop-copy-link" />
      </div>
      <p className="workshop-scenarios">Scenarios: {card.scenarios}</p>
      <p className="workshop-meta" data-testid="workshop-pace">
        {card.pace} · {card.seats}
      </p>
      {!card.ended && <WorkshopSizingNote sizing={card.sizing} />}
      {card.participants.length === 0 ? (
        <p className="list-empty">Nobody has joined yet.</p>
      ) : (
        <ul className="workshop-participants" data-testid="workshop-participants">
          {card.participants.map((participant) => (
            <li key={participant.id} className="workshop-participant" data-testid="workshop-participant" data-participant-id={participant.id}>
              <span className="workshop-participant-name">{participant.name}</span>
              {participant.waiting ? (
                <span className="workshop-muted" data-testid="participant-waiting">
                  waiting for a place
                </span>
              ) : participant.notebooks.length === 0 ? (
                <span className="workshop-muted">no notebook yet</span>
              ) : (
                participant.notebooks.map((notebook) => (
                  <Link key={notebook.id} href={notebook.href} className="workshop-notebook" data-testid="participant-notebook" data-notebook-id={notebook.id}>
                    {notebook.title}
                  </Link>
                ))
              )}
            </li>
          ))}
        </ul>
      )}
    </article>
  );
}
