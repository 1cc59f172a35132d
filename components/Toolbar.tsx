"use client";
/** The notebook toolbar; every button is also reachable from the keyboard (see command-mode.ts). */
import type { CellKind, KernelStatus } from "../server/core/protocol/notebook-model";
import type { NotebookController } from "./model/notebook-controller";
import ToolbarButton from "./ToolbarButton";

import "./Toolbar.css";

interface Props {
  controller: NotebookController;
  selected: { id: string; kind: CellKind; index: number } | null;
  cellCount: number;
  kernel: KernelStatus;
  connected: boolean;
}

export default function Toolbar({ controller, selected, cellCount, kernel, connected }: Props) {
  const kernelBusy = kernel.state === "busy" || kernel.state === "starting";
  return (
    <div className="toolbar" role="toolbar" aria-label="Notebook actions">
      <ToolbarButton testId="toolbar-add-cell" title="Insert a code cell below (B)" onClick={() => controller.insertBelowSelected()}>
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
      <ToolbarButton testId="toolbar-delete" title="Delete cell (D, D)" disabled={selected === null} onClick={() => controller.deleteSelected()}>
        Delete
      </ToolbarButton>
      <span className="toolbar-separator" />
      <ToolbarButton
        testId="toolbar-run"
        title="Run cell and select below (Shift+Enter)"
        disabled={selected === null || !connected}
        onClick={() => controller.runSelectedAndAdvance()}
      >
        ▶ Run
      </ToolbarButton>
      <ToolbarButton testId="toolbar-run-all" title="Run all cells" disabled={!connected} onClick={() => controller.runAll()}>
        ▶▶ Run all
      </ToolbarButton>
      <ToolbarButton
        testId="toolbar-interrupt"
        title="Interrupt the kernel (I, I)"
        disabled={!connected || !kernelBusy}
        onClick={() => controller.interrupt()}
      >
        ■ Interrupt
      </ToolbarButton>
      <ToolbarButton testId="toolbar-restart" title="Restart the kernel (0, 0)" disabled={!connected} onClick={() => controller.requestRestart()}>
        ↻ Restart
      </ToolbarButton>
      <span className="toolbar-separator" />
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
    </div>
  );
}
