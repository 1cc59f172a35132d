"use client";
/** The admin's form for a new account: name, e-mail, password and role; it clears once the server made the account. */
import { useState, type FormEvent } from "react";
import { ACCOUNT_ROLES } from "../../server/core/protocol/accounts-model";
import { isAccountRole, type NewUser } from "./model/users";
import { MIN_PASSWORD_CHARS } from "../shell/model/auth-client";

interface Props {
  busy: boolean;
  onCreate(input: NewUser): Promise<boolean>;
}

const EMPTY: NewUser = { name: "", email: "", password: "", role: "member" };

export default function NewUserForm({ busy, onCreate }: Props) {
  const [input, setInput] = useState<NewUser>(EMPTY);
  const set = (patch: Partial<NewUser>) => setInput((current) => ({ ...current, ...patch }));

  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    if (busy) return;
    void onCreate(input).then((made) => {
      if (made) setInput(EMPTY);
    });
  };

  return (
    <form className="users-new" data-testid="new-user-form" onSubmit={submit}>
      <h2>New user</h2>
      <input data-testid="new-user-name" aria-label="Name" placeholder="Name" required value={input.name} onChange={(e) => set({ name: e.target.value })} />
      <input
        data-testid="new-user-email"
        type="email"
        aria-label="E-mail"
        placeholder="E-mail"
        autoComplete="off"
        required
        value={input.email}
        onChange={(e) => set({ email: e.target.value })}
      />
      <input
        data-testid="new-user-password"
        type="password"
        aria-label={`Password (at least ${MIN_PASSWORD_CHARS} characters)`}
        placeholder={`Password (${MIN_PASSWORD_CHARS}+ characters)`}
        title={`At least ${MIN_PASSWORD_CHARS} characters`}
        autoComplete="new-password"
        minLength={MIN_PASSWORD_CHARS}
        required
        value={input.password}
        onChange={(e) => set({ password: e.target.value })}
      />
      <select
        data-testid="new-user-role"
        aria-label="Role"
        value={input.role}
        onChange={(e) => {
          const role = e.target.value;
          if (isAccountRole(role)) set({ role });
        }}
      >
        {ACCOUNT_ROLES.map((role) => (
          <option key={role} value={role}>
            {role}
          </option>
        ))}
      </select>
      <button type="submit" className="button button-primary" data-testid="new-user-submit" disabled={busy}>
        Create user
      </button>
    </form>
  );
}
