"use client";
/**
 * "You were signed out: <why>" across the top of the page once any of its
 * sockets learns that the session ended (session-ended.ts). It stays: the
 * page can do nothing more until the user signs in again.
 */
import "../shell/browser-setup";
import { useSyncExternalStore } from "react";
import { pageSession, sessionEndWords } from "../shell/model/session-ended";

import "./SessionEndedBanner.css";

const serverState = () => null;

export default function SessionEndedBanner() {
  const reason = useSyncExternalStore(pageSession.subscribe, pageSession.getState, serverState);
  if (reason === null) return null;
  const back = `${window.location.pathname}${window.location.search}`;
  return (
    <div className="session-ended" data-testid="session-ended" data-reason={reason} role="alert">
      <span>You were signed out: {sessionEndWords(reason)}.</span>
      <a className="button button-primary" data-testid="session-sign-in" href={`/login?next=${encodeURIComponent(back)}`}>
        Sign in again
      </a>
    </div>
  );
}
