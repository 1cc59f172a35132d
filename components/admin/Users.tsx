"use client";
/**
 * The admin's users page: every account with its role and open sessions, a
 * form to make one, a role per user, a new password for those who sign in
 * with one, and "Remove" asked twice. Behaviour is in UsersController.
 */
import "../shell/browser-setup";
import ListError from "../shell/ListError";
import { SocketLabTransport } from "../shell/model/lab-client";
import { useStartedController } from "../shell/use-started-controller";
import { isAccountRole, UsersController } from "./model/users";
import NewUserForm from "./NewUserForm";
import UserRow from "./UserRow";

import "./Users.css";

export default function Users() {
  const [controller, state] = useStartedController(() => new UsersController(new SocketLabTransport()));

  return (
    <section className="users" data-testid="users" data-status={state.status}>
      <ListError error={state.error} testId="users-error" onDismiss={() => controller.dismissError()} />
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
                  settingPassword={state.settingPassword === user.id}
                  passwordSet={state.passwordSet === user.id}
                  onRole={(role) => {
                    if (isAccountRole(role)) void controller.setRole(user.id, role);
                  }}
                  onRemove={() => controller.askRemove(user.id)}
                  onConfirm={() => void controller.confirmRemove()}
                  onCancel={() => controller.cancelRemove()}
                  onSetPassword={() => controller.askSetPassword(user.id)}
                  onPassword={(password) => controller.setPassword(password)}
                  onCancelPassword={() => controller.cancelSetPassword()}
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
