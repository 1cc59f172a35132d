"use client";
/** The open notebook was deleted (here or in another tab): say so, and offer to undo it. */
import { useState } from "react";

import "./DeletedBanner.css";

interface Props {
  /** Null for a viewer who may not restore it (shared with them): the banner only says so. */
  onRestore: (() => Promise<boolean>) | null;
}

export default function DeletedBanner({ onRestore }: Props) {
  const [busy, setBusy] = useState(false);
  return (
    <div className="deleted-banner" data-testid="deleted-banner" role="alert">
      {onRestore === null ? (
        <span>This notebook was deleted by its owner.</span>
      ) : (
        <span>This notebook was deleted. It stays in “Recently deleted” on the notebook list until you restore it.</span>
      )}
      {onRestore !== null && (
        <button
          type="button"
          className="button button-primary"
          data-testid="restore-notebook"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void onRestore().finally(() => setBusy(false));
          }}
        >
          Restore
        </button>
      )}
    </div>
  );
}
