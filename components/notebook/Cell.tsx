"use client";
/**
 * One notebook cell: prompt, editor (or rendered markdown), the conflict
 * banner when another tab changed it under an edit, run footer, outputs and
 * the live metrics table. Memoised: it re-renders only when its own cell
 * object, its conflict or its selection changed (the reducer keeps identity
 * of untouched cells).
 */
import { memo, useState } from "react";
import type { Cell as CellModel, Prediction } from "../../server/core/protocol/notebook-model";
import CodeEditor from "./CodeEditor";
import ConflictBanner from "./ConflictBanner";
import LiveMetricsTable from "../charts/LiveMetricsTable";
import MarkdownCell from "./MarkdownCell";
import type { CellConflict } from "./model/connection";
import { lastRunLabel, promptLabel } from "../shell/model/format";
import type { NotebookController } from "./model/notebook-controller";
import OutputArea from "./OutputArea";
import ParameterForm from "./ParameterForm";
import PredictionPrompt from "./PredictionPrompt";
import RunTimer from "./RunTimer";
import TemplateBar from "./TemplateBar";
import CellCharts from "../charts/CellCharts";

import "./Cell.css";

interface Props {
  cell: CellModel;
  index: number;
  selected: boolean;
  /** Selected and in edit mode. */
  editing: boolean;
  conflict: CellConflict | null;
  controller: NotebookController;
  /** The committed answer to this cell's question, if it has one. */
  prediction: Prediction | null;
  /** The server refused the last form change (shown under the form). */
  formError: string | null;
  /** Commands need a live connection (forms, predictions). */
  online: boolean;
  /** False for an explanation whose claims' verdicts are not shown yet: it stays folded (it would give a prediction away). */
  revealed: boolean;
  /** What the charts call this cell's untagged run (see chart-naming). */
  chartName?: string | null;
  /** May change the cell (source, form, prediction, template): the notebook's owner. Default: yes. */
  canEdit?: boolean;
  /** May run the kernel (the hang report's interrupt and restart). Default: yes. */
  canRun?: boolean;
  /** Offers Detach on templated cells (a workshop participant gets the form only). Default: yes. */
  canDetach?: boolean;
}

function Cell({ cell, index, selected, editing, conflict, controller, prediction, formError, online, revealed, chartName = null, canEdit = true, canRun = true, canDetach = true }: Props) {
  const [shownAnyway, setShownAnyway] = useState(false);
  const template = cell.template;
  const attached = template !== null && !template.detached;
  const isMarkdown = cell.kind === "markdown";
  const showEditor = !isMarkdown || editing;
  const classes = ["cell", `cell-${cell.kind}`, `cell-run-${cell.runState}`];
  if (selected) classes.push("cell-selected");
  if (editing) classes.push("cell-editing");

  return (
    <div
      className={classes.join(" ")}
      data-testid="cell"
      data-cell-id={cell.id}
      data-kind={cell.kind}
      data-run-state={cell.runState}
      data-selected={selected}
      data-conflict={conflict !== null}
      onMouseDown={(e) => {
        if (!(e.target instanceof Element) || e.target.closest(".monaco-editor") === null) controller.selectCell(cell.id);
      }}
    >
      {conflict !== null && <ConflictBanner conflict={conflict} onResolve={(choice) => controller.resolveConflict(cell.id, choice)} />}
      {template?.question && (
        <PredictionPrompt
          question={template.question}
          prediction={prediction}
          disabled={!online || !canEdit}
          ranAlready={cell.lastRun !== null || cell.runState !== "idle"}
          onCommit={(choice) => controller.commitPrediction(template.question!.id, choice)}
        />
      )}
      {template !== null && attached && isMarkdown && canDetach && (
        <div className="template-follows" data-testid="template-follows" data-template-id={template.id}>
          This text follows the scenario&apos;s form values.{" "}
          <button type="button" className="button" data-testid="template-detach-text" disabled={!online || !canEdit} onClick={() => controller.detachTemplate(cell.id)}>
            Detach to edit
          </button>
        </div>
      )}
      {template !== null && attached && !isMarkdown && (
        <ParameterForm
          template={template}
          disabled={!online || !canEdit}
          serverError={formError}
          onApply={(values) => controller.setParameters(cell.id, values)}
          onDetach={canDetach ? () => controller.detachTemplate(cell.id) : null}
        />
      )}
      {template !== null && !attached && canEdit && <TemplateBar template={template} onReattach={() => controller.reattachTemplate(cell.id)} />}
      <div className="cell-input">
        <div className="prompt-box cell-prompt" data-testid="cell-prompt" title={runStateTitle(cell)}>
          {isMarkdown ? "" : promptLabel(cell)}
        </div>
        <div className="cell-body">
          {showEditor ? (
            <CodeEditor
              cellId={cell.id}
              value={cell.source}
              language={isMarkdown ? "markdown" : "python"}
              focused={editing}
              ariaLabel={`Cell ${index + 1} (${cell.kind})${attached ? ", rendered from its form" : ""}`}
              readOnly={attached || !canEdit}
              onChange={(source) => controller.editSource(cell.id, source)}
              onFocus={() => controller.editorFocused(cell.id)}
              onBlur={() => controller.editorBlurred(cell.id)}
              onKey={(input) => controller.handleKey(input)}
              assist={canRun && !isMarkdown ? controller.kernelAssist : null}
            />
          ) : revealed || shownAnyway ? (
            <MarkdownCell cellId={cell.id} source={cell.source} onEdit={() => controller.selectCell(cell.id, "edit")} />
          ) : (
            <div className="explanation-folded" data-testid="explanation-folded" data-cell-id={cell.id}>
              <span>Explanation hidden until the verdicts it explains are shown, so it does not give a prediction away.</span>{" "}
              <button type="button" className="button" data-testid="explanation-show" onClick={() => setShownAnyway(true)}>
                Show it now
              </button>
            </div>
          )}
        </div>
      </div>
      {!isMarkdown && (cell.runState !== "idle" || cell.lastRun !== null) && (
        <div className={`cell-status cell-status-${statusClass(cell)}`} data-testid="cell-status">
          {cell.runState === "queued" && "queued"}
          {cell.runState === "running" && (
            <>
              running… <RunTimer key={cell.executionId ?? "run"} outputs={cell.outputs} />
            </>
          )}
          {cell.runState === "idle" && cell.lastRun !== null && lastRunLabel(cell.lastRun)}
        </div>
      )}
      {!isMarkdown && <OutputArea cellId={cell.id} outputs={cell.outputs} actions={canRun ? controller : null} running={cell.runState !== "idle"} />}
      {!isMarkdown && cell.liveMetrics !== null && <LiveMetricsTable cellId={cell.id} metrics={cell.liveMetrics} />}
      {!isMarkdown && cell.executionId !== null && (
        <CellCharts executionId={cell.executionId} running={cell.runState === "running"} feed={controller.metricFeed(cell.id)} templateId={template?.id ?? null} cellName={chartName} />
      )}
    </div>
  );
}

function statusClass(cell: CellModel): string {
  if (cell.runState !== "idle") return cell.runState;
  return cell.lastRun?.status ?? "none";
}

function runStateTitle(cell: CellModel): string {
  if (cell.runState === "queued") return "Queued";
  if (cell.runState === "running") return "Running";
  return cell.executionCount === null ? "Not run yet" : `Execution ${cell.executionCount}`;
}

export default memo(Cell);
