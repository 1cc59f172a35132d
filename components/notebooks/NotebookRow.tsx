"use client";
/**
 * One notebook in the list: open it, rename it in place, duplicate, export or
 * delete it. One shared by someone else names its owner and what the user may
 * do; renaming and deleting are the owner's.
 */
import Link from "next/link";
import { useState } from "react";
import type { NotebookListItem } from "../../server/core/protocol/notebook-model";
import { notebookExportPath } from "../../server/core/protocol/socket-api";
import { formatRelativeTime } from "../shell/model/format";
import type { NotebookListController } from "./model/notebook-list";
import TitleInput from "../shell/TitleInput";

import "./NotebookRow.css";

interface Props {
  item: NotebookListItem;
  now: number;
  list: NotebookListController;
  /** A copy becomes the user's own notebook: only for those who may create notebooks. */
  canDuplicate: boolean;
  /** Offers Delete on the user's own notebooks (a workshop participant keeps the copies they were given). Default: yes. */
  canDelete?: boolean;
}

const SHARED_ACCESS: Record<NotebookListItem["access"], string> = { read: "read only", run: "can run", edit: "" };

export default function NotebookRow({ item, now, list, canDuplicate, canDelete = true }: Props) {
  const [renaming, setRenaming] = useState(false);
  const owned = item.access === "edit";
  return (
    <li className="notebook-row" data-testid="notebook-row" data-notebook-id={item.id} data-access={item.access}>
      <div className="notebook-row-main">
        {renaming ? (
          <TitleInput
            initial={item.title}
            testId="notebook-rename-input"
            onCancel={() => setRenaming(false)}
            onCommit={(title) => {
              setRenaming(false);
              void list.rename(item.id, title);
            }}
          />
        ) : (
          <Link href={`/notebooks/${encodeURIComponent(item.id)}`} className="notebook-row-title" data-testid="notebook-link">
            {item.title}
          </Link>
        )}
        <span className="notebook-row-meta">
          {!owned && (
            <span data-testid="notebook-owner">
              shared by {item.owner.name} · {SHARED_ACCESS[item.access]} ·{" "}
            </span>
          )}
          {item.cellCount} {item.cellCount === 1 ? "cell" : "cells"} ·{" "}
          <time dateTime={item.updatedAt} title={new Date(item.updatedAt).toLocaleString()}>
            {formatRelativeTime(item.updatedAt, now)}
          </time>
        </span>
      </div>
      <div className="notebook-row-actions">
        {owned && (
          <button type="button" className="button button-small" data-testid="notebook-rename" onClick={() => setRenaming(true)}>
            Rename
          </button>
        )}
        {canDuplicate && (
          <button type="button" className="button button-small" data-testid="notebook-duplicate" onClick={() => void list.duplicate(item.id)}>
            Duplicate
          </button>
        )}
        <a className="button button-small" data-testid="notebook-export" href={notebookExportPath(item.id)} download>
          Export
        </a>
        {owned && canDelete && (
          <button type="button" className="button button-small button-danger" data-testid="notebook-delete" onClick={() => void list.remove(item.id)}>
            Delete
          </button>
        )}
      </div>
    </li>
  );
}
