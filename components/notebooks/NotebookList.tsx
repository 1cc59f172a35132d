"use client";
/**
 * The landing page's list of notebooks. Behaviour is in
 * NotebookListController; this renders its state.
 */
import "../shell/browser-setup";
import Link from "next/link";
import { useState } from "react";
import DeletedNotebooks from "./DeletedNotebooks";
import ImportButton from "./ImportButton";
import { browserStorage } from "../shell/model/browser-storage";
import { SocketLabTransport } from "../shell/model/lab-client";
import { NotebookListController, splitShared } from "./model/notebook-list";
import NewNotebookForm from "./NewNotebookForm";
import NotebookRow from "./NotebookRow";
import { ParticipantWorkshopController } from "../workshops/model/participant-workshop";
import ScenarioPicker from "./ScenarioPicker";
import ListError from "../shell/ListError";
import UndoToast from "../shell/UndoToast";
import { useNow } from "../shell/use-now";
import { useStartedController } from "../shell/use-started-controller";
import WorkshopBanner from "../workshops/WorkshopBanner";

import "./NotebookList.css";

/** How often "3 min ago" is brought up to date. */
const CLOCK_MS = 30_000;

export default function NotebookList() {
  const [transport] = useState(() => new SocketLabTransport());
  const [list, state] = useStartedController(() => new NotebookListController(transport));
  // A workshop participant's place in the queue: once admitted, their copies exist and the list reloads to show them.
  const [workshop, participant] = useStartedController(
    () => new ParticipantWorkshopController(() => new SocketLabTransport(), { onAdmitted: () => void list.refresh(), storage: browserStorage() }),
  );
  const now = useNow(CLOCK_MS);

  // Until the server says who this is, everything shows: the server refuses what the role may not do.
  const canCreate = state.me?.can.createNotebooks !== false;
  const seeHosts = state.me?.can.seeHosts !== false;
  // A workshop participant works in the copies the workshop gave them: no lab-wide kernel list, no deleting
  // a copy, no extra copies from the scenario list.
  const isParticipant = state.me?.role === "participant";
  const { own, shared } = splitShared(state.active);
  const deleted = state.deleted.filter((item) => item.access === "edit");

  return (
    <div className="notebook-list" data-testid="notebook-list" data-status={state.status}>
      <WorkshopBanner state={participant} onHandled={(broadcastId) => workshop.handle(broadcastId)} target={null} placement="list" />
      <div className="home-actions">
        {canCreate && <NewNotebookForm list={list} />}
        {canCreate && <ImportButton list={list} />}
        {!isParticipant && (
          <Link href="/kernels" className="button" data-testid="running-kernels-link" title="Every running kernel, its memory, and shutting them down">
            Running kernels
          </Link>
        )}
        {seeHosts && (
          <Link href="/hosts" className="button" data-testid="hosts-link" title="Where kernels run: each host, its agent, Python, torch and GPUs">
            Hosts
          </Link>
        )}
      </div>
      <ListError error={state.error} testId="list-error" onDismiss={() => list.dismissError()} />
      {state.status === "loading" && <p className="list-empty">Loading notebooks…</p>}
      {state.status === "ready" && own.length === 0 && (
        <p className="list-empty" data-testid="list-empty">
          {canCreate ? "No notebooks yet. Create one, or import a Jupyter notebook." : "No notebooks yet. Open one of the scenarios below."}
        </p>
      )}
      {own.length > 0 && (
        <ul className="notebook-rows" data-testid="notebook-rows">
          {own.map((item) => (
            <NotebookRow key={item.id} item={item} now={now} list={list} canDuplicate={canCreate} canDelete={!isParticipant} />
          ))}
        </ul>
      )}
      {shared.length > 0 && (
        <section className="shared-notebooks" data-testid="shared-notebooks">
          <h2>Shared with me</h2>
          <ul className="notebook-rows">
            {shared.map((item) => (
              <NotebookRow key={item.id} item={item} now={now} list={list} canDuplicate={canCreate} />
            ))}
          </ul>
        </section>
      )}
      {!isParticipant && <ScenarioPicker transport={transport} />}
      <DeletedNotebooks items={deleted} now={now} list={list} />
      {state.undo !== null && (
        <div className="notices">
          <UndoToast
            message={`Deleted ‘${state.undo.title}’`}
            undoTestId="undo-delete"
            onUndo={() => void list.undoDelete()}
            onDismiss={() => list.dismissUndo()}
          />
        </div>
      )}
    </div>
  );
}
