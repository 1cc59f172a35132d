"use client";
/** The admin's inline field for one user's new password, in that user's row; it goes away once the server set it. */
import { useState, type FormEvent } from "react";
import { MIN_PASSWORD_CHARS } from "../shell/model/auth-client";

interface Props {
  name: string;
  busy: boolean;
  onSet(password: string): Promise<boolean>;
  onCancel(): void;
}

export default function SetPasswordForm({ name, busy, onSet, onCancel }: Props) {
  const [password, setPassword] = useState("");

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy) return;
    void onSet(password);
  };

  return (
    <form className="users-password" onSubmit={submit}>
      <input
        data-testid="user-new-password"
        type="password"
        aria-label={`New password for ${name}`}
        placeholder={`New password (${MIN_PASSWORD_CHARS}+ characters)`}
        autoComplete="new-password"
        autoFocus
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
      />
      <button type="submit" className="button button-small button-primary" data-testid="user-set-password-confirm" disabled={busy}>
        Set
      </button>
      <button type="button" className="button button-small" data-testid="user-set-password-cancel" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
