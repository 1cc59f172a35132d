"use client";
/** The open notebook was deleted (here or in another tab): say so, and offer to undo it. */
import { useState } from "react";

import "./DeletedBanner.css";

interface Props {
  onRestore(): Promise<boolean>;
}

export default function DeletedBanner({ onRestore }: Props) {
  const [busy, setBusy] = useState(false);
  return (
    <div className="deleted-banner" data-testid="deleted-banner" role="alert">
      <span>This notebook was deleted. It stays in “Recently deleted” on the notebook list until you restore it.</span>
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
    </div>
  );
}
