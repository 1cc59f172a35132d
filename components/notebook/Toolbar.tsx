"use client";
/**
 * The notebook toolbar; every button is also reachable from the keyboard (see
 * command-mode.ts). A viewer sees only what they may do: the owner every
 * group, "run" access the kernel's buttons, "read" access no toolbar.
 */
import type { CellKind, KernelStatus } from "../../server/core/protocol/notebook-model";
import type { NotebookController } from "./model/notebook-controller";
import { shortcutLabel } from "./model/shortcuts";
import ToolbarButton from "./ToolbarButton";

import "./Toolbar.css";

type Selected = { id: string; kind: CellKind; index: number } | null;

interface Props {
  controller: NotebookController;
  selected: Selected;
  cellCount: number;
  kernel: KernelStatus;
  connected: boolean;
  /** May change the notebook (cells, kinds, outputs): its owner. */
  canEdit: boolean;
  /** May run, interrupt and restart its kernel. */
  canRun: boolean;
  tocOpen: boolean;
  onToggleToc(): void;
}

export default function Toolbar({ controller, selected, cellCount, kernel, connected, canEdit, canRun, tocOpen, onToggleToc }: Props) {
  const views = (
    <>
      <ToolbarButton testId="toolbar-toc" title={`${tocOpen ? "Hide" : "Show"} the table of contents (${shortcutLabel("toggle-toc")})`} onClick={onToggleToc}>
        ☰ Contents
      </ToolbarButton>
      <ToolbarButton testId="toolbar-find" title={`Find and replace (${shortcutLabel("find")})`} onClick={() => controller.setPanel("find")}>
        Find
      </ToolbarButton>
      <ToolbarButton testId="toolbar-help" title={`Keyboard shortcuts (${shortcutLabel("help")})`} onClick={() => controller.setPanel("help")}>
        ?
      </ToolbarButton>
    </>
  );
  if (!canEdit && !canRun) {
    return (
      <div className="toolbar" role="toolbar" aria-label="Notebook actions">
        {views}
      </div>
    );
  }
  return (
    <div className="toolbar" role="toolbar" aria-label="Notebook actions">
      {canEdit && <CellButtons controller={controller} selected={selected} cellCount={cellCount} />}
      {canEdit && canRun && <span className="toolbar-separator" />}
      {canRun && <KernelButtons controller={controller} selected={selected} kernel={kernel} connected={connected} />}
      {canEdit && <span className="toolbar-separator" />}
      {canEdit && <OutputButtons controller={controller} selected={selected} />}
      <span className="toolbar-separator" />
      {views}
    </div>
  );
}

function CellButtons({ controller, selected, cellCount }: { controller: NotebookController; selected: Selected; cellCount: number }) {
  return (
    <>
      <ToolbarButton testId="toolbar-add-cell" title={`Insert a code cell below (${shortcutLabel("insert-below")})`} onClick={() => controller.insertBelowSelected()}>
        + Cell
      </ToolbarButton>
      <ToolbarButton
        testId="toolbar-move-up"
        title="Move cell up"
        disabled={selected === null || selected.index === 0}
        onClick={() => controller.moveSelected(-1)}
      >
        ↑
      </ToolbarButton>
      <ToolbarButton
        testId="toolbar-move-down"
        title="Move cell down"
        disabled={selected === null || selected.index >= cellCount - 1}
        onClick={() => controller.moveSelected(1)}
      >
        ↓
      </ToolbarButton>
      <ToolbarButton testId="toolbar-delete" title={`Delete cell (${shortcutLabel("delete-cell")})`} disabled={selected === null} onClick={() => controller.deleteSelected()}>
        Delete
      </ToolbarButton>
    </>
  );
}

function KernelButtons({ controller, selected, kernel, connected }: { controller: NotebookController; selected: Selected; kernel: KernelStatus; connected: boolean }) {
  const kernelBusy = kernel.state === "busy" || kernel.state === "starting";
  return (
    <>
      <ToolbarButton
        testId="toolbar-run"
        title={`Run cell and select below (${shortcutLabel("run-advance")})`}
        disabled={selected === null || !connected}
        onClick={() => controller.runSelectedAndAdvance()}
      >
        ▶ Run
      </ToolbarButton>
      <ToolbarButton testId="toolbar-run-all" title="Run all cells" disabled={!connected} onClick={() => controller.runAll()}>
        ▶▶ Run all
      </ToolbarButton>
      <ToolbarButton testId="toolbar-interrupt" title={`Interrupt the kernel (${shortcutLabel("interrupt")})`} disabled={!connected || !kernelBusy} onClick={() => controller.interrupt()}>
        ■ Interrupt
      </ToolbarButton>
      <ToolbarButton testId="toolbar-restart" title={`Restart the kernel (${shortcutLabel("restart")})`} disabled={!connected} onClick={() => controller.requestRestart()}>
        ↻ Restart
      </ToolbarButton>
    </>
  );
}

function OutputButtons({ controller, selected }: { controller: NotebookController; selected: Selected }) {
  return (
    <>
      <select
        className="toolbar-select"
        data-testid="toolbar-kind"
        aria-label="Cell type"
        disabled={selected === null}
        value={selected?.kind ?? "code"}
        onChange={(e) => {
          const kind = e.target.value === "markdown" ? "markdown" : "code";
          if (selected !== null) controller.setKind(selected.id, kind);
        }}
      >
        <option value="code">Code</option>
        <option value="markdown">Markdown</option>
      </select>
      <ToolbarButton
        testId="toolbar-clear-outputs"
        title="Clear the selected cell's outputs"
        disabled={selected === null}
        onClick={() => selected !== null && controller.clearOutputs([selected.id])}
      >
        Clear
      </ToolbarButton>
      <ToolbarButton testId="toolbar-clear-all" title="Clear all outputs" onClick={() => controller.clearAllOutputs()}>
        Clear all
      </ToolbarButton>
    </>
  );
}
