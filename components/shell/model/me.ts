/**
 * Who is signed in (the `whoami` lab command) and what the user menu offers
 * them: the links their role opens, and signing out. The server decides every
 * permission; this only hides what it would refuse.
 */
import type { Me, Role } from "../../../server/core/protocol/accounts-model";
import { assertNever } from "../../../server/core/assert-never";
import { signOut, type AuthResult } from "./auth-client";
import type { LabTransport } from "./lab-client";
import { pageSession, type SessionWatch } from "./session-ended";
import { ViewStore } from "./view-store";

export interface MeState {
  status: "loading" | "ready" | "error";
  me: Me | null;
  error: string | null;
  signingOut: boolean;
}

export interface MenuLink {
  href: string;
  label: string;
  testId: string;
}

export function roleLabel(role: Role): string {
  switch (role) {
    case "admin":
      return "admin";
    case "member":
      return "member";
    case "facilitator":
      return "facilitator";
    case "participant":
      return "workshop participant";
    default:
      return assertNever(role);
  }
}

/** The pages this user's role opens, beyond the notebooks, then everyone's own account page. */
export function menuLinks(me: Me): MenuLink[] {
  const links: MenuLink[] = [];
  if (me.can.manageUsers) links.push({ href: "/admin/users", label: "Users", testId: "user-menu-users" });
  if (me.can.runWorkshops) links.push({ href: "/workshops", label: "Workshops", testId: "user-menu-workshops" });
  links.push({ href: "/account", label: "Account", testId: "user-menu-account" });
  return links;
}

export interface MeOptions {
  signOut?: () => Promise<AuthResult>;
  /** Where the browser goes once signed out (default: the sign-in page). */
  leave?: (path: string) => void;
  session?: SessionWatch;
}

export class MeController {
  private readonly store = new ViewStore<MeState>({ status: "loading", me: null, error: null, signingOut: false });
  readonly subscribe = this.store.subscribe;
  readonly getState = this.store.getState;
  private readonly doSignOut: () => Promise<AuthResult>;
  private readonly leave: (path: string) => void;
  private readonly session: SessionWatch;
  private seq = 0;

  constructor(
    private readonly transport: LabTransport,
    options: MeOptions = {},
  ) {
    this.doSignOut = options.signOut ?? (() => signOut());
    this.leave = options.leave ?? ((path) => window.location.assign(path));
    this.session = options.session ?? pageSession;
  }

  start(): void {
    this.transport.onConnect(() => void this.load());
    void this.load();
  }

  stop(): void {
    this.transport.close();
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    const ack = await this.transport.send({ op: "whoami" });
    if (seq !== this.seq) return;
    if (ack.ok) this.update({ status: "ready", me: ack.me, error: null });
    // A session that ended has its own banner; the menu keeps what it knew.
    else if (!this.session.over) this.update({ status: this.state.me === null ? "error" : "ready", error: ack.error });
  }

  /** Ends the session on the server, then goes to the sign-in page; a refusal stays on this page, in words. */
  async signOut(): Promise<boolean> {
    if (this.state.signingOut) return false;
    this.update({ signingOut: true, error: null });
    this.session.leave();
    const result = await this.doSignOut();
    if (!result.ok) {
      this.session.stay();
      this.update({ signingOut: false, error: `Signing out failed: ${result.error}` });
      return false;
    }
    this.leave("/login");
    return true;
  }

  private get state(): MeState {
    return this.store.getState();
  }

  private update(patch: Partial<MeState>): void {
    this.store.update(patch);
  }
}
