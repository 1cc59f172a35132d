"use client";
/** One account on the users page: its role select, "Set password" (for those who sign in with one) and "Remove" asked twice. */
import type { UserView } from "../../server/core/protocol/accounts-model";
import { roleChoices, sessionsLabel } from "./model/users";
import SetPasswordForm from "../account/SetPasswordForm";

interface Props {
  user: UserView;
  busy: boolean;
  confirming: boolean;
  settingPassword: boolean;
  passwordSet: boolean;
  onRole(role: string): void;
  onRemove(): void;
  onConfirm(): void;
  onCancel(): void;
  onSetPassword(): void;
  onPassword(password: string): Promise<boolean>;
  onCancelPassword(): void;
}

export default function UserRow({ user, busy, confirming, settingPassword, passwordSet, onRole, onRemove, onConfirm, onCancel, onSetPassword, onPassword, onCancelPassword }: Props) {
  const choices = roleChoices(user);
  return (
    <tr className="users-row" data-testid="user-row" data-email={user.email} data-user-id={user.id} data-role={user.role}>
      <td>{user.name}</td>
      <td>
        {user.hasPassword ? (
          user.email
        ) : (
          <span className="users-muted" data-testid="user-sign-in">
            {user.signsInWith === "workshop-link" ? "no password (joined a workshop)" : "no password (signs in with the link the lab prints on this machine)"}
          </span>
        )}
      </td>
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
        ) : settingPassword ? (
          <SetPasswordForm name={user.name} busy={busy} onSet={onPassword} onCancel={onCancelPassword} />
        ) : (
          <>
            {passwordSet && (
              <span className="users-done" data-testid="user-password-set" role="status">
                Password set
              </span>
            )}
            {user.hasPassword && (
              <button type="button" className="button button-small" data-testid="user-set-password" disabled={busy} onClick={onSetPassword}>
                Set password
              </button>
            )}
            {user.you ? (
              <span className="users-muted" data-testid="user-you">
                you
              </span>
            ) : (
              <button type="button" className="button button-small button-danger" data-testid="user-remove" disabled={busy} onClick={onRemove}>
                Remove
              </button>
            )}
          </>
        )}
      </td>
    </tr>
  );
}
