"use client";
/** The latest metric values of a cell's run, one row per rank/device (real charts come later). */
import { memo } from "react";
import type { LiveMetrics } from "../../server/core/protocol/notebook-model";
import { metricsTable } from "./model/metrics-table";

import "./LiveMetricsTable.css";

interface Props {
  cellId: string;
  metrics: LiveMetrics;
}

function LiveMetricsTable({ cellId, metrics }: Props) {
  const table = metricsTable(metrics);
  return (
    <div className="live-metrics" data-testid="live-metrics" data-cell-id={cellId}>
      <table>
        <thead>
          <tr>
            <th scope="col" className="metrics-rank">
              rank
            </th>
            <th scope="col">step</th>
            {table.columns.map((c) => (
              <th scope="col" key={c.key}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.rows.map((row) => (
            <tr key={row.rank} data-testid="live-metrics-row" data-rank={row.rank}>
              <th scope="row" className="metrics-rank">
                {row.label}
              </th>
              <td data-metric="step">{row.step}</td>
              {row.cells.map((text, i) => (
                <td key={table.columns[i]?.key ?? i} data-metric={table.columns[i]?.key}>
                  {text}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <div className="live-metrics-caption" data-testid="live-metrics-caption">
        {table.caption}
      </div>
    </div>
  );
}

export default memo(LiveMetricsTable);
