"use client";
/**
 * The facilitator console of one workshop, live: the room and its settings,
 * one roster row per participant, the class's predictions beside what their
 * runs measured, and broadcasts. Behaviour is in WorkshopConsoleController;
 * what each part says comes from the model's pure functions.
 */
import "../shell/browser-setup";
import Link from "next/link";
import { useEffect, useState } from "react";
import { workshopSummaryPath } from "../../server/core/protocol/socket-api";
import ListError from "../shell/ListError";
import { SocketLabTransport } from "../shell/model/lab-client";
import { useStartedController } from "../shell/use-started-controller";
import { WorkshopConsoleController } from "./model/workshop-console";
import { consoleHeader } from "./model/workshop-console-words";
import BroadcastForm from "./BroadcastForm";
import BroadcastList from "./BroadcastList";
import ConsoleHeader from "./ConsoleHeader";
import QuestionTallyChart from "./QuestionTallyChart";
import RosterGrid from "./RosterGrid";

import "./WorkshopConsole.css";

interface Props {
  workshopId: string;
}

export default function WorkshopConsole({ workshopId }: Props) {
  const [controller, state] = useStartedController(() => new WorkshopConsoleController(workshopId, new SocketLabTransport()));
  const [origin, setOrigin] = useState("");

  useEffect(() => setOrigin(window.location.origin), []);

  const view = state.view;
  const header = view === null ? null : consoleHeader(view, origin, workshopSummaryPath(workshopId));

  return (
    <section className="console" data-testid="workshop-console" data-status={state.status} data-workshop-id={workshopId}>
      {/* A workshop not found says the server's words on its own page below. */}
      {state.status !== "not-found" && <ListError error={state.error} testId="console-error" onDismiss={() => controller.dismissError()} />}
      {state.status === "loading" && <p className="list-empty">Loading the workshop…</p>}
      {state.status === "not-found" && (
        <div className="console-not-found" data-testid="console-not-found">
          <h1>Workshop not found</h1>
          <p>
            There is no workshop <code>{workshopId}</code> of yours on this server. The link may be wrong, or the workshop is another
            facilitator&apos;s.
          </p>
          {state.error !== null && <p className="console-muted">Server said: {state.error}</p>}
          <Link href="/workshops" className="button button-primary">
            Back to your workshops
          </Link>
        </div>
      )}
      {view !== null && header !== null && (
        <>
          <ConsoleHeader header={header} confirmingEnd={state.confirmingEnd} busy={state.busy} actions={controller} />
          <section className="console-section" aria-labelledby="console-roster-title">
            <h2 id="console-roster-title" className="console-section-title">
              Participants{" "}
              <span className="console-muted" data-testid="console-counts">
                {header.admitted} in{header.waiting > 0 ? `, ${header.waiting} waiting` : ""}, of {header.capacity}
              </span>
            </h2>
            <RosterGrid roster={view.roster} ended={header.state === "ended"} restarting={state.restarting} onRestart={(notebookId) => void controller.restartKernel(notebookId)} />
          </section>
          <section className="console-section" aria-labelledby="console-tallies-title">
            <h2 id="console-tallies-title" className="console-section-title">
              Predicted vs measured
            </h2>
            {view.tallies.length === 0 ? (
              <p className="list-empty" data-testid="tallies-empty">
                No questions yet: they appear once participants have their copies.
              </p>
            ) : (
              <div className="console-tallies">
                {view.tallies.map((tally) => (
                  <QuestionTallyChart key={tally.questionId} tally={tally} scenarioTitle={state.scenarioTitles[tally.scenarioId] ?? tally.scenarioId} />
                ))}
              </div>
            )}
          </section>
          <section className="console-section" aria-labelledby="console-broadcast-title">
            <h2 id="console-broadcast-title" className="console-section-title">
              Broadcast to everyone
            </h2>
            {header.state !== "ended" && (
              <BroadcastForm
                key={state.sent}
                scenarios={header.scenarioIds.map((id) => ({ id, title: state.scenarioTitles[id] ?? id }))}
                busy={state.busy}
                onSend={(draft) => controller.broadcast(draft)}
              />
            )}
            <BroadcastList broadcasts={view.broadcasts} />
          </section>
        </>
      )}
    </section>
  );
}
