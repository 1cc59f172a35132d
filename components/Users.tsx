"use client";
/**
 * The admin's users page: every account with its role and open sessions, a
 * form to make one, a role per user, and "Remove" asked twice. Behaviour is in
 * UsersController.
 */
import "./browser-setup";
import { useEffect, useState, useSyncExternalStore } from "react";
import type { UserView } from "../server/core/protocol/accounts-model";
import { SocketLabTransport } from "./model/lab-client";
import { isAccountRole, roleChoices, sessionsLabel, UsersController } from "./model/users";
import NewUserForm from "./NewUserForm";

import "./Users.css";

export default function Users() {
  const [controller] = useState(() => new UsersController(new SocketLabTransport()));
  const state = useSyncExternalStore(controller.subscribe, controller.getState, controller.getState);

  useEffect(() => {
    controller.start();
    return () => controller.stop();
  }, [controller]);

  return (
    <section className="users" data-testid="users" data-status={state.status}>
      {state.error !== null && (
        <div className="list-error" data-testid="users-error" role="alert">
          <span>{state.error}</span>
          <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => controller.dismissError()}>
            ×
          </button>
        </div>
      )}
      {state.status === "loading" && <p className="list-empty">Loading users…</p>}
      {state.status === "ready" && (
        <>
          <table className="users-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>E-mail</th>
                <th>Role</th>
                <th>Sessions</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {state.users.map((user) => (
                <UserRow
                  key={user.id}
                  user={user}
                  busy={state.busy}
                  confirming={state.confirmingRemove === user.id}
                  onRole={(role) => {
                    if (isAccountRole(role)) void controller.setRole(user.id, role);
                  }}
                  onRemove={() => controller.askRemove(user.id)}
                  onConfirm={() => void controller.confirmRemove()}
                  onCancel={() => controller.cancelRemove()}
                />
              ))}
            </tbody>
          </table>
          <NewUserForm busy={state.busy} onCreate={(input) => controller.create(input)} />
        </>
      )}
    </section>
  );
}

interface RowProps {
  user: UserView;
  busy: boolean;
  confirming: boolean;
  onRole(role: string): void;
  onRemove(): void;
  onConfirm(): void;
  onCancel(): void;
}

function UserRow({ user, busy, confirming, onRole, onRemove, onConfirm, onCancel }: RowProps) {
  const choices = roleChoices(user);
  return (
    <tr className="users-row" data-testid="user-row" data-email={user.email} data-user-id={user.id} data-role={user.role}>
      <td>{user.name}</td>
      <td>{user.hasPassword ? user.email : <span className="users-muted">no password (joined a workshop)</span>}</td>
      <td>
        {choices === null ? (
          <span data-testid="user-role-fixed">{user.role}</span>
        ) : (
          <select data-testid="user-role" aria-label={`Role of ${user.name}`} value={user.role} disabled={busy} onChange={(e) => onRole(e.target.value)}>
            {choices.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        )}
      </td>
      <td data-testid="user-sessions">{sessionsLabel(user.activeSessions)}</td>
      <td className="users-actions">
        {confirming ? (
          <>
            <span className="users-confirm-text">Remove {user.name}? Their sessions end now.</span>
            <button type="button" className="button button-small button-danger" data-testid="user-remove-confirm" disabled={busy} onClick={onConfirm}>
              Remove
            </button>
            <button type="button" className="button button-small" data-testid="user-remove-cancel" onClick={onCancel}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" className="button button-small button-danger" data-testid="user-remove" disabled={busy} onClick={onRemove}>
            Remove
          </button>
        )}
      </td>
    </tr>
  );
}
