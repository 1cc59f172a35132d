"use client";
/** "Recently deleted": notebooks deleted softly, each with a way back. */
import type { NotebookListItem } from "../../server/core/protocol/notebook-model";
import { formatRelativeTime } from "../shell/model/format";
import type { NotebookListController } from "./model/notebook-list";

import "./NotebookRow.css";
import "./DeletedNotebooks.css";

interface Props {
  items: readonly NotebookListItem[];
  now: number;
  list: NotebookListController;
}

export default function DeletedNotebooks({ items, now, list }: Props) {
  if (items.length === 0) return null;
  return (
    <section className="recently-deleted" data-testid="recently-deleted">
      <h2>Recently deleted</h2>
      <ul className="notebook-rows">
        {items.map((item) => (
          <li key={item.id} className="notebook-row notebook-row-deleted" data-testid="deleted-row" data-notebook-id={item.id}>
            <div className="notebook-row-main">
              <span className="notebook-row-title">{item.title}</span>
              <span className="notebook-row-meta">
                {item.cellCount} {item.cellCount === 1 ? "cell" : "cells"}
                {item.deletedAt !== null && <> · deleted {formatRelativeTime(item.deletedAt, now)}</>}
              </span>
            </div>
            <div className="notebook-row-actions">
              <button type="button" className="button button-small" data-testid="notebook-restore" onClick={() => void list.restore(item.id)}>
                Restore
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
