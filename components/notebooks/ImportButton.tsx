"use client";
/** Import a Jupyter .ipynb file: pick it, send its text to the server, open the new notebook (with the import's notes). */
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { importNotesKey } from "../shell/model/lab-client";
import type { NotebookListController } from "./model/notebook-list";
import { errorMessage } from "../../server/core/errors";

interface Props {
  list: NotebookListController;
}

export default function ImportButton({ list }: Props) {
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);

  const importFile = async (file: File) => {
    setBusy(true);
    let text: string;
    try {
      text = await file.text();
    } catch (err) {
      setBusy(false);
      list.reportError(`Could not read ${file.name}: ${errorMessage(err)}`);
      return;
    }
    const imported = await list.importFile(file.name, text);
    setBusy(false);
    if (imported === null) return;
    // The notebook page shows what did not survive the import as it was.
    if (imported.notes.length > 0) sessionStorage.setItem(importNotesKey(imported.id), JSON.stringify(imported.notes));
    router.push(`/notebooks/${encodeURIComponent(imported.id)}`);
  };

  return (
    <>
      <button type="button" className="button" data-testid="import-notebook" disabled={busy} onClick={() => input.current?.click()}>
        {busy ? "Importing…" : "Import .ipynb"}
      </button>
      <input
        ref={input}
        type="file"
        accept=".ipynb,application/x-ipynb+json,application/json"
        hidden
        data-testid="import-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          e.target.value = "";
          if (file !== undefined) void importFile(file);
        }}
      />
    </>
  );
}
