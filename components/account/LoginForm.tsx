"use client";
/** Sign in with e-mail and password; on success the browser goes on to `next` (already checked to be a path of this site). */
import "../shell/browser-setup";
import { useState, type FormEvent } from "react";
import { landingAfterSignIn, signIn } from "../shell/model/auth-client";

import "./AuthForm.css";

interface Props {
  next: string;
}

export default function LoginForm({ next }: Props) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    void signIn(email, password).then((result) => {
      if (result.ok) {
        // A full load: the server reads the new cookie for the page it serves.
        window.location.assign(landingAfterSignIn(next, result.role));
        return;
      }
      setBusy(false);
      setError(result.error);
    });
  };

  return (
    <form className="auth-form" onSubmit={submit} data-testid="login-form">
      <label className="auth-field">
        <span>E-mail</span>
        <input type="email" data-testid="login-email" autoComplete="username" required autoFocus value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label className="auth-field">
        <span>Password</span>
        <input type="password" data-testid="login-password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </label>
      {error !== null && (
        <p className="auth-error" data-testid="login-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary auth-submit" data-testid="login-submit" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
