"use client";
/** "New notebook": creates "Untitled" (numbered when taken) at once and opens it; the title is renamed in place there. */
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { NotebookListController } from "./model/notebook-list";

interface Props {
  list: NotebookListController;
}

export default function NewNotebookForm({ list }: Props) {
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className="button button-primary"
      data-testid="new-notebook"
      disabled={busy}
      onClick={() => {
        setBusy(true);
        void list.create().then((id) => {
          if (id !== null) router.push(`/notebooks/${encodeURIComponent(id)}`);
          else setBusy(false);
        });
      }}
    >
      {busy ? "Creating…" : "New notebook"}
    </button>
  );
}
