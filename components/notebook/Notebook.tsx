"use client";
/**
 * The notebook page: header (back link, editable title, save state,
 * export, connection, kernel), toolbar, cells; a banner while the notebook
 * is deleted, and a plain "not found" page for an id the server lacks.
 * All behaviour is in NotebookController; this component renders its state,
 * forwards command-mode keys, and keeps DOM focus in step with the mode.
 */
import "../shell/browser-setup";
import Link from "next/link";
import { useEffect, useMemo, useRef, useState, useSyncExternalStore, type KeyboardEvent } from "react";
import { AskedClaimsContext, askedClaims, PredictionsContext, predictionsByClaim } from "./model/predictions";
import { claimsWithVerdict, isRevealed } from "./model/verdict-reveal";
import { notebookExportPath } from "../../server/core/protocol/socket-api";
import { cellChartNames } from "../../server/core/charts/chart-naming";
import Cell from "./Cell";
import ConnectionStatus from "./ConnectionStatus";
import DeletedBanner from "./DeletedBanner";
import IdleShutdownBanner from "./IdleShutdownBanner";
import ImportNotes from "../notebooks/ImportNotes";
import { browserStorage } from "../shell/model/browser-storage";
import { SocketLabTransport, takeImportNotes } from "../shell/model/lab-client";
import EditableTitle from "../shell/EditableTitle";
import KernelSpecControl from "../hosts/KernelSpecControl";
import KernelStatusBadge from "./KernelStatusBadge";
import { accessBadge, mayDo } from "./model/notebook-access";
import { NotebookController } from "./model/notebook-controller";
import NotebookNotFound from "./NotebookNotFound";
import SaveStatus from "./SaveStatus";
import { nextHiddenStep, ParticipantWorkshopController, unrevealedCells } from "../workshops/model/participant-workshop";
import SharePanel from "../notebooks/SharePanel";
import StepHidden from "../workshops/StepHidden";
import Toolbar from "./Toolbar";
import UndoToast from "../shell/UndoToast";
import WorkshopBanner from "../workshops/WorkshopBanner";
import CommandPalette from "./CommandPalette";
import FindBar from "./FindBar";
import ShortcutHelp from "./ShortcutHelp";
import ThemeToggle from "../shell/ThemeToggle";
import TocPanel from "./TocPanel";
import { notebookCommands } from "./model/notebook-commands";
import { findShortcut } from "./model/shortcuts";
import { themeStore } from "../shell/model/theme";
import { useStartedController } from "../shell/use-started-controller";

import "./Notebook.css";

interface Props {
  notebookId: string;
  /** A facilitator's peek into a participant's notebook: shown read-only, whatever the server would allow. */
  peek?: boolean;
}

/** Keys typed into these belong to them, not to command mode. */
const OWN_KEYS_SELECTOR = ".monaco-editor, input, textarea, select, button, summary, [contenteditable]";

export default function Notebook({ notebookId, peek = false }: Props) {
  const [controller] = useState(() => new NotebookController(notebookId, { connection: { drafts: browserStorage() }, confirm: (question) => window.confirm(question) }));
  const [importNotes, setImportNotes] = useState<string[] | null>(null);
  useEffect(() => setImportNotes(takeImportNotes(sessionStorage, notebookId)), [notebookId]);
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);
  // A workshop participant's banner and pace; for anyone else it closes after `whoami`.
  const [workshop, participant] = useStartedController(() => new ParticipantWorkshopController(() => new SocketLabTransport(), { storage: browserStorage() }));
  const container = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const page = useRef<HTMLDivElement>(null);
  const { doc, ui } = state;
  const cells = doc?.cells;
  const predictions = doc?.predictions;
  // Verdict reports deep in outputs show the committed predictions beside their claims.
  const byClaim = useMemo(() => (cells && predictions ? predictionsByClaim(cells, predictions) : new Map()), [cells, predictions]);
  const asked = useMemo(() => askedClaims(cells ?? []), [cells]);
  // Explanations that would give a prediction away wait for their claims' verdicts.
  const shownClaims = useMemo(() => claimsWithVerdict(cells ?? []), [cells]);
  // Charts name a cell's untagged run after the cell as the user sees it (heading above, or its prompt).
  const chartNames = useMemo(() => cellChartNames(cells ?? []), [cells]);
  // A led workshop's steps not revealed yet are left out (the server refuses to run them).
  // (The view object changes only when the server's view does, not on every push.)
  const workshopView = participant.status === "ready" ? participant.view : null;
  const unrevealed = useMemo(() => unrevealedCells(cells ?? [], workshopView), [cells, workshopView]);
  // Led pace: what the facilitator reveals next, so the page says more is coming.
  const nextStep = useMemo(() => nextHiddenStep(cells ?? [], workshopView), [cells, workshopView]);

  useEffect(() => controller.setUnshownCells(unrevealed), [controller, unrevealed]);

  useEffect(() => {
    controller.start();
    const online = () => controller.setBrowserOnline(true);
    const offline = () => controller.setBrowserOnline(false);
    const hidden = () => controller.pageHidden();
    const visibility = () => {
      if (document.visibilityState === "hidden") controller.pageHidden();
      controller.setVisible(document.visibilityState !== "hidden");
    };
    controller.setVisible(document.visibilityState !== "hidden");
    window.addEventListener("online", online);
    window.addEventListener("offline", offline);
    window.addEventListener("pagehide", hidden);
    document.addEventListener("visibilitychange", visibility);
    return () => {
      window.removeEventListener("online", online);
      window.removeEventListener("offline", offline);
      window.removeEventListener("pagehide", hidden);
      document.removeEventListener("visibilitychange", visibility);
      controller.stop();
    };
  }, [controller]);

  // Command mode: keyboard focus goes back to the notebook (out of the editor it left).
  useEffect(() => {
    const root = container.current;
    if (root === null || ui.mode !== "command") return;
    const active = document.activeElement;
    if (active === null || active === document.body || active.closest(".monaco-editor") !== null) {
      root.focus({ preventScroll: true });
    }
  }, [ui.mode, ui.selectedId, state.panel]);

  // The palette's keys work inside an editor too: taken before Monaco sees them (the run keys come through Monaco's own actions).
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (!(e.target instanceof Element) || e.target.closest(".monaco-editor") === null) return;
      const input = { key: e.key, shift: e.shiftKey, ctrl: e.ctrlKey, alt: e.altKey, meta: e.metaKey, at: e.timeStamp };
      if (findShortcut("edit", input)?.shortcut.command !== "palette") return;
      e.preventDefault();
      e.stopPropagation();
      controller.handleKey(input);
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [controller]);

  // Keep the selected cell in view, but never move a cell the user can see (and may be clicking into: a
  // scroll between mousedown and mouseup would swallow the click on a form field or a radio button).
  useEffect(() => {
    if (ui.selectedId === null) return;
    const el = container.current?.querySelector(`[data-testid="cell"][data-cell-id="${CSS.escape(ui.selectedId)}"]`);
    if (!el) return;
    const { top, bottom } = el.getBoundingClientRect();
    if (bottom <= 0 || top >= window.innerHeight) el.scrollIntoView({ block: "nearest" });
  }, [ui.selectedId]);

  // The table of contents starts below the sticky header, whose height changes as it wraps.
  useEffect(() => {
    const header = top.current;
    if (header === null || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => page.current?.style.setProperty("--notebook-top-height", `${header.offsetHeight}px`));
    observer.observe(header);
    return () => observer.disconnect();
  }, [state.connection.status]);

  // Host labels and leased GPUs' names come from the hosts list: asked for once connected (opening the kernel form asks again).
  const hostsListed = state.hosts !== null;
  const online = state.connection.status === "connected";
  useEffect(() => {
    if (!hostsListed && online) void controller.loadHosts();
  }, [controller, hostsListed, online]);

  useEffect(() => {
    document.title = `${doc?.title || notebookId} · Multi-GPU Lab`;
  }, [doc?.title, notebookId]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.defaultPrevented || e.nativeEvent.isComposing) return;
    if (e.target instanceof Element && e.target.closest(OWN_KEYS_SELECTOR) !== null) return;
    const handled = controller.handleKey({
      key: e.key,
      shift: e.shiftKey,
      ctrl: e.ctrlKey,
      alt: e.altKey,
      meta: e.metaKey,
      at: e.timeStamp,
    });
    if (handled) e.preventDefault();
  };

  const selectedIndex = doc === null || ui.selectedId === null ? -1 : doc.cells.findIndex((c) => c.id === ui.selectedId);
  const selectedCell = doc?.cells[selectedIndex];
  const connected = state.connection.status === "connected";
  // Once a participant's workshop has ended their copy is read-only (the server already refuses the rest).
  const workshopEnded = participant.status === "ready" && participant.view.state === "ended" && state.access !== null;
  const peeking = peek && state.access !== null;
  const access = workshopEnded || peeking ? "read" : state.access;
  const canEdit = mayDo(access, "edit");
  const canRun = mayDo(access, "run");
  // A workshop participant's page has a participant's controls: no sharing, no lab-wide kernel list, no host or
  // GPU choice (the workshop's plan decides), no detaching the code from its form. Hidden until who this is is known.
  const labControls = participant.status === "none";
  const badge = workshopEnded ? "Read only — the workshop has ended" : peeking ? `Peek — read only${state.owner === null ? "" : `, ${state.owner}'s notebook`}` : accessBadge(access, state.owner);

  if (state.connection.status === "not-found") return <NotebookNotFound notebookId={notebookId} reason={state.connection.reason} />;

  const closePanel = () => controller.setPanel(null);
  /** The TOC and find bar: select the cell and bring it to the top of the view. */
  const showCell = (cellId: string) => {
    controller.selectCell(cellId);
    container.current?.querySelector(`[data-testid="cell"][data-cell-id="${CSS.escape(cellId)}"]`)?.scrollIntoView({ block: "center" });
  };
  const commands = () =>
    notebookCommands({
      controller,
      kernel: doc?.kernel.state ?? "not-started",
      canEdit,
      canRun,
      hasSelection: selectedCell !== undefined,
      setTheme: (choice) => themeStore()?.choose(choice),
      exportNotebook: () => window.location.assign(notebookExportPath(notebookId)),
    });

  return (
    <div ref={page} className={`notebook-page${state.tocOpen ? " toc-open" : ""}`}>
      <div ref={top} className="notebook-top">
        <header className="notebook-header">
          <Link href="/" className="brand" data-testid="back-to-list" title="All notebooks">
            ← Notebooks
          </Link>
          <h1 className="notebook-title">
            <EditableTitle
              title={doc?.title || notebookId}
              testId="notebook-title"
              disabled={!connected || doc === null || !canEdit}
              onSave={(title) => controller.rename(title)}
            />
          </h1>
          {badge !== null && (
            <span className="notebook-access" data-testid={access === "read" ? "read-only" : "can-run"} data-access={access}>
              {badge}
            </span>
          )}
          <SaveStatus status={state.save} />
          <a className="button export-link" data-testid="export-notebook" href={notebookExportPath(notebookId)} download title="Download as a Jupyter notebook (.ipynb)">
            Export
          </a>
          {labControls && (
            <Link href="/kernels" className="button export-link" data-testid="running-kernels-link" title="Every running kernel of this lab, and shutting them down">
              Running kernels
            </Link>
          )}
          {labControls && access === "edit" && <SharePanel notebookId={notebookId} send={(command) => controller.labCommand(command)} disabled={!connected} />}
          {doc !== null && labControls && (
            <KernelSpecControl
              spec={doc.kernelSpec}
              kernelState={doc.kernel.state}
              hosts={state.hosts}
              disabled={!connected || !canEdit}
              onOpen={() => void controller.loadHosts()}
              onApply={(hostId, gpus) => controller.setKernelSpec(hostId, gpus)}
            />
          )}
          <ThemeToggle />
          <button type="button" className="button button-ghost button-small" data-testid="open-palette" title="Command palette (Ctrl+Shift+P)" onClick={() => controller.setPanel("palette")}>
            ⌘ Commands
          </button>
          <div className="notebook-header-status">
            <ConnectionStatus state={state.connection} unsavedCells={state.unsavedCells} />
            {doc !== null && (
              <KernelStatusBadge
                status={doc.kernel}
                live={connected}
                hosts={state.hosts}
                onRestart={canRun ? () => controller.restart() : null}
              />
            )}
          </div>
        </header>
        <Toolbar
          controller={controller}
          selected={selectedCell === undefined ? null : { id: selectedCell.id, kind: selectedCell.kind, index: selectedIndex }}
          cellCount={doc?.cells.length ?? 0}
          kernel={doc?.kernel ?? { state: "not-started" }}
          connected={connected}
          canEdit={canEdit}
          canRun={canRun}
          tocOpen={state.tocOpen}
          onToggleToc={() => controller.toggleToc()}
        />
        {state.panel === "find" && doc !== null && (
          <FindBar cells={doc.cells} canEdit={canEdit} onShow={showCell} onReplace={(sources, message) => controller.replaceSources(sources, message)} onClose={closePanel} />
        )}
        {doc?.deleted === true && <DeletedBanner onRestore={canEdit ? () => controller.restore() : null} />}
        {doc?.kernelIdleShutdownAt && <IdleShutdownBanner shutdownAt={doc.kernelIdleShutdownAt} />}
        {importNotes !== null && <ImportNotes notes={importNotes} onDismiss={() => setImportNotes(null)} />}
        <WorkshopBanner
          state={participant}
          onHandled={(broadcastId) => workshop.handle(broadcastId)}
          target={doc === null ? null : { notebookId, cells: doc.cells, canApply: connected && canEdit, apply: (cellId, values) => controller.setParameters(cellId, values) }}
        />
      </div>
      <div
        ref={container}
        className={`notebook notebook-mode-${ui.mode}`}
        data-testid="notebook"
        data-mode={ui.mode}
        tabIndex={0}
        onKeyDown={onKeyDown}
      >
        {doc === null ? (
          <div className="notebook-loading" data-testid="notebook-loading">
            Opening notebook…
          </div>
        ) : (
          <PredictionsContext value={byClaim}>
          <AskedClaimsContext value={asked}>
          {doc.cells.map((cell, index) => unrevealed.has(cell.id) ? null : (
            <Cell
              key={cell.id}
              cell={cell}
              index={index}
              selected={cell.id === ui.selectedId}
              editing={cell.id === ui.selectedId && ui.mode === "edit"}
              conflict={state.conflicts[cell.id] ?? null}
              controller={controller}
              prediction={cell.template?.question ? (doc.predictions[cell.template.question.id] ?? null) : null}
              formError={state.formErrors[cell.id] ?? null}
              online={state.connection.status === "connected"}
              canEdit={canEdit}
              canRun={canRun}
              canDetach={labControls}
              revealed={isRevealed(cell.template?.revealAfter, shownClaims)}
              chartName={chartNames.get(cell.id) ?? null}
            />
          ))}
          {unrevealed.size > 0 && <StepHidden cells={unrevealed.size} next={nextStep} />}
          </AskedClaimsContext>
          </PredictionsContext>
        )}
        {/* A cell added below the hidden steps would belong to them: adding waits until they are revealed. */}
        {doc !== null && canEdit && unrevealed.size === 0 && (
          <button
            type="button"
            className="add-cell-bottom"
            data-testid="add-cell-bottom"
            onClick={() => controller.selectCell(controller.insertCell(doc.cells.length), "edit")}
          >
            + Add a cell
          </button>
        )}
      </div>
      {state.tocOpen && doc !== null && <TocPanel cells={doc.cells} selectedId={ui.selectedId} onJump={showCell} onClose={() => controller.toggleToc()} />}
      {state.panel === "help" && <ShortcutHelp onClose={closePanel} />}
      {state.panel === "palette" && <CommandPalette commands={commands()} onClose={closePanel} />}
      {(state.notices.length > 0 || state.undo !== null || state.replaceUndo !== null) && (
        <div className="notices" role="status">
          {state.replaceUndo !== null && (
            <UndoToast
              message={state.replaceUndo.message}
              undoTestId="undo-replace"
              onUndo={() => controller.undoReplace()}
              onDismiss={() => controller.dismissReplaceUndo()}
            />
          )}
          {state.undo !== null && (
            <UndoToast
              message={`Reattached the cell to ${state.undo.templateId}; your edits were replaced`}
              undoTestId="undo-reattach"
              onUndo={() => controller.undoReattach()}
              onDismiss={() => controller.dismissUndo()}
            />
          )}
          {state.notices.map((n) => (
            <div key={n.id} className="notice" data-testid="notice">
              <span>{n.message}</span>
              <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => controller.dismissNotice(n.id)}>
                ×
              </button>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
