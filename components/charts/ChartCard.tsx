"use client";
/**
 * The frame every chart shares: title and unit, the number of real points
 * it represents (`data-points`), CSV and PNG export of exactly what it
 * holds, its legend, and a note saying how its numbers were computed.
 */
import { useRef, useState, type ReactNode } from "react";
import ChartLegend, { type LegendEntry } from "./ChartLegend";
import { downloadText, fileStem } from "./download";
import { exportChartPng } from "./export-png";
import { errorMessage } from "../../server/core/errors";

interface Props {
  testId: string;
  title: string;
  /** Real metric points behind the chart. */
  points: number;
  legend: readonly LegendEntry[];
  /** Built only when asked: a loss CSV can hold a million rows. */
  csv: () => string;
  note?: ReactNode;
  /** Buttons beside the exports (reset zoom). */
  actions?: ReactNode;
  /** More `data-` attributes on the card (what tests and styles select on). */
  data?: Readonly<Record<`data-${string}`, string>>;
  children: ReactNode;
}

export default function ChartCard({ testId, title, points, legend, csv, note, actions, data, children }: Props) {
  const body = useRef<HTMLDivElement>(null);
  const [exportError, setExportError] = useState<string | null>(null);

  const saveCsv = () => downloadText(csv(), `${fileStem(title)}.csv`, "text/csv;charset=utf-8");
  const savePng = async () => {
    const svg = body.current?.querySelector<SVGSVGElement>("svg.recharts-surface");
    if (!svg) {
      setExportError("the chart has not been drawn yet");
      return;
    }
    try {
      setExportError(null);
      await exportChartPng(svg, title, legend, `${fileStem(title)}.png`);
    } catch (err) {
      setExportError(errorMessage(err));
    }
  };

  return (
    <section className="chart-card" data-testid={testId} data-points={points} {...data}>
      <header className="chart-card-header">
        <h4 className="chart-title">{title}</h4>
        <div className="chart-actions">
          {actions}
          <button type="button" className="button button-small chart-button" data-testid="chart-export-csv" onClick={saveCsv} title="Download the chart's data as CSV">
            CSV
          </button>
          <button type="button" className="button button-small chart-button" data-testid="chart-export-png" onClick={savePng} title="Download the chart as a PNG image">
            PNG
          </button>
        </div>
      </header>
      <div className="chart-body" ref={body}>
        {children}
      </div>
      <ChartLegend entries={legend} />
      {note ? <div className="chart-note">{note}</div> : null}
      {exportError ? (
        <p className="chart-error" role="alert">
          PNG export failed: {exportError}
        </p>
      ) : null}
    </section>
  );
}
