/**
 * The account page: changing one's own password. The change signs out the
 * user's other sessions and replaces this tab's with a new one, so the
 * page's session watch is told to expect the old one's end: the page then
 * reloads into the new session instead of showing "You were signed out".
 */
import type { Me } from "../../../server/core/protocol/accounts-model";
import { changePassword, type AuthResult } from "../../shell/model/auth-client";
import { pageSession, type SessionWatch } from "../../shell/model/session-ended";
import { ViewStore } from "../../shell/model/view-store";

export interface PasswordChangeState {
  /** "changed": done; the page reloads once the server ends the old session. */
  phase: "form" | "changing" | "changed";
  error: string | null;
}

/** Whether this user signs in with a password they can change (a participant joined with a code and has none). */
export function hasOwnPassword(me: Pick<Me, "role">): boolean {
  return me.role !== "participant";
}

export interface PasswordChangeOptions {
  change?: (current: string, next: string) => Promise<AuthResult>;
  session?: SessionWatch;
}

export class PasswordChangeController {
  private readonly store = new ViewStore<PasswordChangeState>({ phase: "form", error: null });
  readonly subscribe = this.store.subscribe;
  readonly getState = this.store.getState;
  private readonly change: (current: string, next: string) => Promise<AuthResult>;
  private readonly session: SessionWatch;

  constructor(options: PasswordChangeOptions = {}) {
    this.change = options.change ?? ((current, next) => changePassword(current, next));
    this.session = options.session ?? pageSession;
  }

  /** True once changed; else the reason (the server's words, or too short) is shown and the form stays. */
  async submit(current: string, next: string): Promise<boolean> {
    if (this.state.phase !== "form") return false;
    this.update({ phase: "changing", error: null });
    // Before asking: the server may end this tab's old session before its answer arrives.
    this.session.expectRenewal();
    const result = await this.change(current, next);
    if (!result.ok) {
      this.session.renewalFailed();
      this.update({ phase: "form", error: result.error });
      return false;
    }
    this.update({ phase: "changed" });
    this.session.renewed();
    return true;
  }

  private get state(): PasswordChangeState {
    return this.store.getState();
  }

  private update(patch: Partial<PasswordChangeState>): void {
    this.store.update(patch);
  }
}
