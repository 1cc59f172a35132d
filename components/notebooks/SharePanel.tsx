"use client";
/**
 * "Share" in the notebook header (the owner's only): a small panel listing who
 * may read or run this notebook, a form to share it by e-mail, and "Remove"
 * per person. Behaviour is in SharesController.
 */
import "../shell/browser-setup";
import { useState, useSyncExternalStore, type FormEvent } from "react";
import type { ShareAccess } from "../../server/core/protocol/accounts-model";
import { shareAccessLabel, SharesController, type ShareSend } from "./model/shares";

import "./SharePanel.css";

interface Props {
  notebookId: string;
  send: ShareSend;
  disabled: boolean;
}

export default function SharePanel({ notebookId, send, disabled }: Props) {
  const [controller] = useState(() => new SharesController(notebookId, send));
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);
  const [email, setEmail] = useState("");
  const [access, setAccess] = useState<ShareAccess>("read");

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (state.busy) return;
    void controller.share(email, access).then((shared) => {
      if (shared) setEmail("");
    });
  };

  return (
    <div className="share">
      <button
        type="button"
        className="button export-link"
        data-testid="share-button"
        aria-expanded={state.open}
        disabled={disabled}
        onClick={() => (state.open ? controller.close() : void controller.open())}
      >
        Share
      </button>
      {state.open && (
        <div className="share-panel" data-testid="share-panel" role="dialog" aria-label="Share this notebook">
          {state.status === "ready" && state.shares.length === 0 && <p className="share-empty">Only you can see this notebook.</p>}
          {state.shares.length > 0 && (
            <ul className="share-rows">
              {state.shares.map((share) => (
                <li key={share.userId} className="share-row" data-testid="share-row" data-email={share.email} data-access={share.access}>
                  <span className="share-who" title={share.email}>
                    {share.name}
                  </span>
                  <span className="share-access-label">{shareAccessLabel(share.access)}</span>
                  <button type="button" className="button button-small button-danger" data-testid="share-remove" disabled={state.busy} onClick={() => void controller.unshare(share.email)}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form className="share-form" onSubmit={submit}>
            <input type="email" data-testid="share-email" aria-label="E-mail of the person to share with" placeholder="e-mail" value={email} onChange={(e) => setEmail(e.target.value)} />
            <select data-testid="share-access" aria-label="What they may do" value={access} onChange={(e) => setAccess(e.target.value === "run" ? "run" : "read")}>
              <option value="read">can read</option>
              <option value="run">can read and run</option>
            </select>
            <button type="submit" className="button button-primary button-small" data-testid="share-submit" disabled={state.busy || email.trim() === ""}>
              Share
            </button>
          </form>
          {state.error !== null && (
            <p className="share-error" data-testid="share-error" role="alert">
              {state.error}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
