"use client";
/**
 * The account page's form: the current password and a new one. Once changed,
 * the user's other sessions are signed out and this page reloads into its new
 * session as soon as the server ends the old one. A workshop participant has
 * no password to change. Behaviour is in PasswordChangeController.
 */
import "../shell/browser-setup";
import { useState, useSyncExternalStore, type FormEvent } from "react";
import { hasOwnPassword, PasswordChangeController } from "./model/account";
import { MIN_PASSWORD_CHARS } from "../shell/model/auth-client";
import { SocketLabTransport } from "../shell/model/lab-client";
import { MeController } from "../shell/model/me";
import { useStartedController } from "../shell/use-started-controller";

import "./AuthForm.css";

export default function ChangePassword() {
  const [, me] = useStartedController(() => new MeController(new SocketLabTransport()));
  const [controller] = useState(() => new PasswordChangeController());
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");

  if (me.me === null) {
    return me.status === "loading" ? <p className="list-empty">Loading your account…</p> : <p className="auth-error" data-testid="password-error" role="alert">{me.error}</p>;
  }
  if (!hasOwnPassword(me.me)) {
    return (
      <p className="list-empty" data-testid="no-password">
        Participants have no password: you joined with your workshop&apos;s code.
      </p>
    );
  }
  if (state.phase === "changed") {
    return (
      <p className="auth-done" data-testid="password-changed" role="status">
        Password changed; your other sessions were signed out.
      </p>
    );
  }

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    void controller.submit(current, next);
  };
  const busy = state.phase === "changing";

  return (
    <form className="auth-form" onSubmit={submit} data-testid="password-form">
      {/* Lets a password manager tie the new password to this account. */}
      <input type="email" hidden readOnly autoComplete="username" value={me.me.email ?? ""} />
      <label className="auth-field">
        <span>Current password</span>
        <input type="password" data-testid="password-current" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
      </label>
      <label className="auth-field">
        <span>New password (at least {MIN_PASSWORD_CHARS} characters)</span>
        <input type="password" data-testid="password-new" autoComplete="new-password" required value={next} onChange={(e) => setNext(e.target.value)} />
      </label>
      {state.error !== null && (
        <p className="auth-error" data-testid="password-error" role="alert">
          {state.error}
        </p>
      )}
      <button type="submit" className="button button-primary auth-submit" data-testid="password-submit" disabled={busy}>
        {busy ? "Changing…" : "Change password"}
      </button>
    </form>
  );
}
