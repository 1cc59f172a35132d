"use client";
/** Join a workshop by its code with the name the class will see; on success the browser goes to the notebook list. */
import "./browser-setup";
import { useState, type FormEvent } from "react";
import { joinWorkshop } from "./model/auth-client";

import "./AuthForm.css";

interface Props {
  code: string;
}

/** The longest display name the server takes. */
const MAX_NAME_CHARS = 80;

export default function JoinForm({ code }: Props) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy || name.trim() === "") return;
    setBusy(true);
    setError(null);
    void joinWorkshop(code, name).then((result) => {
      if (result.ok) {
        window.location.assign("/");
        return;
      }
      setBusy(false);
      setError(result.error);
    });
  };

  return (
    <form className="auth-form" onSubmit={submit} data-testid="join-form">
      <label className="auth-field">
        <span>Your name, as the class will see it</span>
        <input data-testid="join-name" autoComplete="nickname" required autoFocus maxLength={MAX_NAME_CHARS} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      {error !== null && (
        <p className="auth-error" data-testid="join-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary auth-submit" data-testid="join-submit" disabled={busy || name.trim() === ""}>
        {busy ? "Joining…" : "Join"}
      </button>
    </form>
  );
}
