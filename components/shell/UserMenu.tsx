"use client";
/**
 * Who is signed in, in the header of every signed-in page: name and role,
 * the pages the role opens (Users, Workshops) and "Sign out". Behaviour is in
 * MeController.
 */
import "./browser-setup";
import Link from "next/link";
import { SocketLabTransport } from "./model/lab-client";
import { MeController, menuLinks, roleLabel } from "./model/me";
import { useStartedController } from "./use-started-controller";

import "./UserMenu.css";

export default function UserMenu() {
  const [controller, state] = useStartedController(() => new MeController(new SocketLabTransport()));

  const me = state.me;
  return (
    <nav className="user-menu" data-testid="user-menu" data-status={state.status} data-role={me?.role} aria-label="Your account">
      {me !== null && (
        <span className="user-menu-who" title={me.email ?? undefined}>
          <span className="user-menu-name" data-testid="user-menu-name">
            {me.name}
          </span>{" "}
          <span className="user-menu-role" data-testid="user-menu-role">
            {roleLabel(me.role)}
          </span>
        </span>
      )}
      {me !== null &&
        menuLinks(me).map((link) => (
          <Link key={link.href} href={link.href} className="button button-small" data-testid={link.testId}>
            {link.label}
          </Link>
        ))}
      {state.error !== null && (
        <span className="user-menu-error" data-testid="user-menu-error" role="alert">
          {state.error}
        </span>
      )}
      <button type="button" className="button button-small" data-testid="sign-out" disabled={state.signingOut} onClick={() => void controller.signOut()}>
        {state.signingOut ? "Signing out…" : "Sign out"}
      </button>
    </nav>
  );
}
