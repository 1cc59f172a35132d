"use client";
/**
 * The landing page's list of notebooks. Behaviour is in
 * NotebookListController; this renders its state.
 */
import "./browser-setup";
import Link from "next/link";
import { useEffect, useState, useSyncExternalStore } from "react";
import DeletedNotebooks from "./DeletedNotebooks";
import ImportButton from "./ImportButton";
import { SocketLabTransport } from "./model/lab-client";
import { NotebookListController } from "./model/notebook-list";
import NewNotebookForm from "./NewNotebookForm";
import NotebookRow from "./NotebookRow";
import ScenarioPicker from "./ScenarioPicker";
import UndoToast from "./UndoToast";

import "./NotebookList.css";

/** How often "3 min ago" is brought up to date. */
const CLOCK_MS = 30_000;

export default function NotebookList() {
  const [transport] = useState(() => new SocketLabTransport());
  const [list] = useState(() => new NotebookListController(transport));
  const state = useSyncExternalStore(list.subscribe, list.getState, list.getState);
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    list.start();
    return () => list.stop();
  }, [list]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), CLOCK_MS);
    return () => clearInterval(timer);
  }, []);

  return (
    <div className="notebook-list" data-testid="notebook-list" data-status={state.status}>
      <div className="home-actions">
        <NewNotebookForm list={list} />
        <ImportButton list={list} />
        <Link href="/kernels" className="button" data-testid="running-kernels-link" title="Every running kernel, its memory, and shutting them down">
          Running kernels
        </Link>
        <Link href="/hosts" className="button" data-testid="hosts-link" title="Where kernels run: each host, its agent, Python, torch and GPUs">
          Hosts
        </Link>
      </div>
      {state.error !== null && (
        <div className="list-error" data-testid="list-error" role="alert">
          <span>{state.error}</span>
          <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => list.dismissError()}>
            ×
          </button>
        </div>
      )}
      {state.status === "loading" && <p className="list-empty">Loading notebooks…</p>}
      {state.status === "ready" && state.active.length === 0 && (
        <p className="list-empty" data-testid="list-empty">
          No notebooks yet. Create one, or import a Jupyter notebook.
        </p>
      )}
      {state.active.length > 0 && (
        <ul className="notebook-rows" data-testid="notebook-rows">
          {state.active.map((item) => (
            <NotebookRow key={item.id} item={item} now={now} list={list} />
          ))}
        </ul>
      )}
      <ScenarioPicker transport={transport} />
      <DeletedNotebooks items={state.deleted} now={now} list={list} />
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
