"use client";
/** "New notebook": asks for a title, creates the notebook on the server, then opens it. */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { MAX_TITLE_CHARS } from "../server/core/limits";
import type { NotebookListController } from "./model/notebook-list";

import "./NewNotebookForm.css";

interface Props {
  list: NotebookListController;
}

export default function NewNotebookForm({ list }: Props) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);

  if (!open) {
    return (
      <button type="button" className="button button-primary" data-testid="new-notebook" onClick={() => setOpen(true)}>
        New notebook
      </button>
    );
  }
  return (
    <form
      className="new-notebook-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (title.trim() === "" || busy) return;
        setBusy(true);
        void list.create(title).then((id) => {
          setBusy(false);
          if (id !== null) router.push(`/notebooks/${encodeURIComponent(id)}`);
        });
      }}
    >
      <input
        className="title-input"
        data-testid="new-notebook-title"
        aria-label="Title of the new notebook"
        placeholder="Title, e.g. DDP vs DataParallel on 2 GPUs"
        autoFocus
        maxLength={MAX_TITLE_CHARS}
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") setOpen(false);
        }}
      />
      <button type="submit" className="button button-primary" data-testid="new-notebook-create" disabled={busy || title.trim() === ""}>
        {busy ? "Creating…" : "Create"}
      </button>
      <button type="button" className="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
