"use client";
/**
 * Join a workshop by its code with the name the class will see; on success
 * the browser goes to the notebook list. The code is looked up as the page
 * opens: the page names the workshop it joins, and a code that opens none
 * says so before anyone types a name.
 */
import "../shell/browser-setup";
import { useEffect, useState, type FormEvent } from "react";
import { joinWorkshop, workshopInfo, type JoinInfo } from "../shell/model/auth-client";

import "../account/AuthForm.css";

interface Props {
  code: string;
}

/** The longest display name the server takes. */
const MAX_NAME_CHARS = 80;

type Lookup = { status: "looking" } | { status: "found"; info: JoinInfo } | { status: "none"; error: string };

export default function JoinForm({ code }: Props) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [lookup, setLookup] = useState<Lookup>({ status: "looking" });

  useEffect(() => {
    let live = true;
    void workshopInfo(code).then((result) => {
      if (live) setLookup(result.ok ? { status: "found", info: result.info } : { status: "none", error: result.error });
    });
    return () => {
      live = false;
    };
  }, [code]);

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

  if (lookup.status === "none") {
    return (
      <p className="auth-error" data-testid="join-unknown" role="alert">
        {lookup.error[0]!.toUpperCase() + lookup.error.slice(1)}.
      </p>
    );
  }
  return (
    <form className="auth-form" onSubmit={submit} data-testid="join-form" data-workshop={lookup.status === "found" ? lookup.info.title : ""}>
      <p className="auth-lead" data-testid="join-workshop">
        {lookup.status === "looking" ? (
          "Looking up this workshop…"
        ) : (
          <>
            You are joining <strong>{lookup.info.title}</strong>
            {lookup.info.ended ? " (it has ended: your notebooks open read-only)" : lookup.info.rejoining ? " again, as before" : ""}.
          </>
        )}
      </p>
      <label className="auth-field">
        <span>Your name, as the class will see it</span>
        <input data-testid="join-name" autoComplete="nickname" required autoFocus maxLength={MAX_NAME_CHARS} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      {error !== null && (
        <p className="auth-error" data-testid="join-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button button-primary auth-submit" data-testid="join-submit" disabled={busy || name.trim() === "" || lookup.status !== "found"}>
        {busy ? "Joining…" : "Join"}
      </button>
    </form>
  );
}
