/**
 * The account pages' models (user menu, account, users, workshops, sharing) against an
 * in-memory lab that answers `lab:command` as the protocol says and refuses
 * what the signed-in role may not do (the server is faked, the models are
 * real).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hasOwnPassword, PasswordChangeController } from "../../components/account/model/account";
import type { AuthResult } from "../../components/shell/model/auth-client";
import type { LabTransport } from "../../components/shell/model/lab-client";
import { MeController, menuLinks, roleLabel } from "../../components/shell/model/me";
import { SessionWatch } from "../../components/shell/model/session-ended";
import { SharesController } from "../../components/notebooks/model/shares";
import { roleChoices, sessionsLabel, UsersController } from "../../components/admin/model/users";
import { joinUrl, newWorkshopProblem, workshopCard, WorkshopsController } from "../../components/workshops/model/workshops";
import type { Me, Role, ShareView, UserView, WorkshopView } from "../../server/core/protocol/accounts-model";
import { labCommandSchema, type LabCommand } from "../../server/core/protocol/socket-api";
import { labAnswerOf, type LabAnswer, type LabOp, type LabSend } from "../../server/core/protocol/ops-lab";

function me(role: Role, name = "Ada"): Me {
  return {
    id: `u-${name.toLowerCase()}`,
    name,
    email: role === "participant" ? null : `${name.toLowerCase()}@lab.test`,
    role,
    workshopId: role === "participant" ? "ws-1" : null,
    sessionExpiresAt: "2025-06-08T12:00:00Z",
    can: { createNotebooks: role !== "participant", manageUsers: role === "admin", runWorkshops: role === "facilitator", seeHosts: role !== "participant" },
  };
}

function user(name: string, role: Role): UserView {
  return { id: `u-${name.toLowerCase()}`, name, email: `${name.toLowerCase()}@lab.test`, role, createdAt: "2025-06-01T12:00:00Z", hasPassword: role !== "participant", signsInWith: role === "participant" ? "workshop-link" : "password", activeSessions: 1 };
}

class AccountsLab implements LabTransport {
  readonly users = new Map<string, UserView>();
  readonly shares = new Map<string, ShareView>();
  readonly workshops: WorkshopView[] = [];
  readonly sent: LabCommand["op"][] = [];
  readonly passwords = new Map<string, string>();
  private next = 1;

  constructor(public me: Me) {
    this.users.set(me.id, user(me.name, me.role));
  }

  send<Op extends LabOp>(command: LabSend<Op>): Promise<LabAnswer<Op>> {
    return this.sendRaw(command).then((answer) => labAnswerOf<Op>(command.op, answer));
  }

  /** The answer as the server would send it, read by the browser's own labAnswerOf above. */
  private sendRaw(command: LabCommand): Promise<LabAnswer<LabOp>> {
    labCommandSchema.parse(command);
    this.sent.push(command.op);
    return Promise.resolve(this.answer(command));
  }

  onConnect(): void {}
  close(): void {}

  private answer(command: LabCommand): LabAnswer<LabOp> {
    const refused = (what: string): LabAnswer<LabOp> => ({ ok: false, error: `a ${this.me.role} may not ${what}`, code: "forbidden" });
    switch (command.op) {
      case "whoami":
        return { ok: true, me: this.me };
      case "list-users":
      case "create-user":
      case "set-user-role":
      case "remove-user":
      case "set-user-password": {
        if (!this.me.can.manageUsers) return refused("manage users");
        if (command.op === "create-user") {
          if ([...this.users.values()].some((u) => u.email === command.email)) return { ok: false, error: `${command.email} already has an account`, code: "conflict" };
          const made = { ...user(command.name, command.role), email: command.email, id: `u-${this.next++}`, activeSessions: 0 };
          this.users.set(made.id, made);
          return { ok: true, user: made };
        }
        if (command.op === "set-user-role") {
          const found = this.users.get(command.userId);
          if (!found) return { ok: false, error: "no such user", code: "not-found" };
          const changed = { ...found, role: command.role };
          this.users.set(found.id, changed);
          return { ok: true, user: changed };
        }
        if (command.op === "set-user-password") {
          const found = this.users.get(command.userId);
          if (!found?.hasPassword) return { ok: false, error: "this user signs in without a password (a participant or the token-mode local user)", code: "invalid" };
          this.passwords.set(found.id, command.password);
          return { ok: true, user: found };
        }
        if (command.op === "remove-user") this.users.delete(command.userId);
        return { ok: true, users: [...this.users.values()] };
      }
      case "list-shares":
        return { ok: true, shares: [...this.shares.values()] };
      case "share-notebook": {
        const known = [...this.users.values()].find((u) => u.email === command.email);
        if (!known) return { ok: false, error: `nobody has the e-mail ${command.email}`, code: "not-found" };
        if (command.access === "none") this.shares.delete(known.id);
        else this.shares.set(known.id, { userId: known.id, name: known.name, email: known.email, access: command.access });
        return { ok: true, shares: [...this.shares.values()] };
      }
      case "list-scenarios":
        return { ok: true, scenarios: [{ id: "ddp", title: "DDP vs DataParallel", source: "a.md", sourceTitle: "", summary: "" }, { id: "zero", title: "ZeRO", source: "b.md", sourceTitle: "", summary: "" }] };
      case "list-workshops":
      case "create-workshop": {
        if (!this.me.can.runWorkshops) return refused("run workshops");
        if (command.op === "list-workshops") return { ok: true, workshops: [...this.workshops] };
        const made: WorkshopView = {
          id: `ws-${this.next++}`,
          title: command.title,
          joinCode: `CODE${this.next}`,
          scenarioIds: command.scenarioIds,
          closedAt: null,
          endedAt: null,
          startsAt: null,
          endsAt: null,
          createdAt: new Date(Date.parse("2025-06-01T12:00:00Z") + this.next * 60_000).toISOString(),
          pace: "self",
          capacity: 60,
          sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] },
          participants: [],
        };
        this.workshops.push(made);
        return { ok: true, workshop: made };
      }
      default:
        return { ok: false, error: `the accounts lab does not answer ${command.op}`, code: "unavailable" };
    }
  }
}

describe("user menu", () => {
  it("offers Users to admins and Workshops to facilitators, nothing more to others", () => {
    assert.deepEqual(menuLinks(me("admin")).map((l) => [l.href, l.testId]), [
      ["/admin/users", "user-menu-users"],
      ["/account", "user-menu-account"],
    ]);
    assert.deepEqual(menuLinks(me("facilitator")).map((l) => l.href), ["/workshops", "/account"]);
    assert.deepEqual(menuLinks(me("member")).map((l) => l.label), ["Account"]);
    assert.deepEqual(menuLinks(me("participant")).map((l) => l.href), ["/account"]);
    assert.equal(roleLabel("participant"), "workshop participant");
  });

  it("asks who is signed in", async () => {
    const menu = new MeController(new AccountsLab(me("facilitator", "Fay")), { session: new SessionWatch() });
    await menu.load();
    assert.equal(menu.getState().status, "ready");
    assert.equal(menu.getState().me?.name, "Fay");
  });

  it("signs out, then leaves for the sign-in page without a banner", async () => {
    const session = new SessionWatch();
    const went: string[] = [];
    const menu = new MeController(new AccountsLab(me("member")), { session, signOut: () => Promise.resolve({ ok: true }), leave: (path) => went.push(path) });
    assert.equal(await menu.signOut(), true);
    assert.deepEqual(went, ["/login"]);
    session.end("signed-out");
    assert.equal(session.getState(), null, "this tab asked for it");
  });

  it("stays, with the reason, when signing out fails", async () => {
    const session = new SessionWatch();
    const went: string[] = [];
    const menu = new MeController(new AccountsLab(me("member")), { session, signOut: () => Promise.resolve({ ok: false, error: "could not reach the server (offline)" }), leave: (path) => went.push(path) });
    assert.equal(await menu.signOut(), false);
    assert.deepEqual(went, []);
    assert.equal(menu.getState().error, "Signing out failed: could not reach the server (offline)");
    assert.equal(menu.getState().signingOut, false);
    session.end("expired");
    assert.equal(session.getState(), "expired");
  });
});

describe("account page", () => {
  function changer(answers: AuthResult[]): { page: PasswordChangeController; session: SessionWatch; asked: Array<[string, string]>; reloads: number[] } {
    const reloads: number[] = [];
    const session = new SessionWatch(() => reloads.push(1));
    const asked: Array<[string, string]> = [];
    const change = (current: string, next: string): Promise<AuthResult> => {
      asked.push([current, next]);
      return Promise.resolve(answers.shift() ?? { ok: true });
    };
    return { page: new PasswordChangeController({ change, session }), session, asked, reloads };
  }

  it("offers the form to everyone but participants", () => {
    assert.deepEqual((["admin", "member", "facilitator", "participant"] as const).map((role) => hasOwnPassword(me(role))), [true, true, true, false]);
  });

  it("changes the password, then reloads into the new session when the old one ends, with no banner", async () => {
    const { page, session, asked, reloads } = changer([{ ok: true }]);
    assert.equal(await page.submit("old password", "a new long one"), true);
    assert.deepEqual(asked, [["old password", "a new long one"]]);
    assert.deepEqual(page.getState(), { phase: "changed", error: null });
    assert.equal(reloads.length, 0, "not before the server ends this tab's old session");
    session.end("revoked");
    assert.equal(reloads.length, 1);
    assert.equal(session.getState(), null);
  });

  it("keeps the form with the server's words on a refusal, and a later end is news", async () => {
    const { page, session, reloads } = changer([{ ok: false, error: "Invalid password" }]);
    assert.equal(await page.submit("not it", "a new long one"), false);
    assert.deepEqual(page.getState(), { phase: "form", error: "Invalid password" });
    session.end("removed");
    assert.equal(session.getState(), "removed");
    assert.equal(reloads.length, 0);
  });

  it("asks once at a time", async () => {
    const { page, asked } = changer([]);
    const first = page.submit("old password", "a new long one");
    assert.equal(page.getState().phase, "changing");
    assert.equal(await page.submit("old password", "another long one"), false);
    assert.equal(await first, true);
    assert.equal(asked.length, 1);
  });
});

describe("users page", () => {
  async function page(role: Role = "admin"): Promise<{ lab: AccountsLab; users: UsersController }> {
    const lab = new AccountsLab(me(role));
    lab.users.set("u-pia", user("Pia", "participant"));
    const users = new UsersController(lab);
    users.start();
    await users.refresh();
    return { lab, users };
  }

  it("lists the users by name", async () => {
    const { users } = await page();
    assert.equal(users.getState().status, "ready");
    assert.deepEqual(users.getState().users.map((u) => u.name), ["Ada", "Pia"]);
  });

  it("shows a non-admin the server's refusal", async () => {
    const { users } = await page("member");
    assert.equal(users.getState().status, "error");
    assert.equal(users.getState().error, "Loading the users failed: a member may not manage users");
  });

  it("creates a user, and shows a refusal in the server's words", async () => {
    const { users } = await page();
    assert.equal(await users.create({ name: " Bob ", email: "bob@lab.test", password: "long enough pw", role: "facilitator" }), true);
    assert.deepEqual(users.getState().users.map((u) => [u.name, u.role]), [["Ada", "admin"], ["Bob", "facilitator"], ["Pia", "participant"]]);
    assert.equal(await users.create({ name: "Bob again", email: "bob@lab.test", password: "long enough pw", role: "member" }), false);
    assert.equal(users.getState().error, "Creating the user failed: bob@lab.test already has an account");
    users.dismissError();
    assert.equal(users.getState().error, null);
  });

  it("changes a role", async () => {
    const { lab, users } = await page();
    await users.create({ name: "Bob", email: "bob@lab.test", password: "long enough pw", role: "member" });
    const bob = users.getState().users.find((u) => u.name === "Bob")!;
    assert.equal(await users.setRole(bob.id, "admin"), true);
    assert.equal(users.getState().users.find((u) => u.id === bob.id)?.role, "admin");
    assert.equal(lab.users.get(bob.id)?.role, "admin");
  });

  it("removes a user only after the confirmation, and can be cancelled", async () => {
    const { lab, users } = await page();
    assert.equal(await users.confirmRemove(), false, "nothing asked yet");
    users.askRemove("u-pia");
    assert.equal(users.getState().confirmingRemove, "u-pia");
    users.cancelRemove();
    assert.equal(users.getState().confirmingRemove, null);
    assert.equal(lab.sent.includes("remove-user"), false);
    users.askRemove("u-pia");
    assert.equal(await users.confirmRemove(), true);
    assert.deepEqual(users.getState().users.map((u) => u.name), ["Ada"]);
    assert.equal(users.getState().confirmingRemove, null);
  });

  it("sets a password for a user who signs in with one, refusing a short one without asking", async () => {
    const { lab, users } = await page();
    assert.equal(await users.setPassword("whatever long"), false, "no row asked");
    users.askRemove("u-ada");
    users.askSetPassword("u-ada");
    assert.equal(users.getState().settingPassword, "u-ada");
    assert.equal(users.getState().confirmingRemove, null, "one question per row at a time");
    assert.equal(await users.setPassword("short"), false);
    assert.equal(users.getState().error, "Setting the password failed: a password has at least 10 characters");
    assert.equal(lab.sent.includes("set-user-password"), false);
    assert.equal(await users.setPassword("a new long one"), true);
    assert.equal(lab.passwords.get("u-ada"), "a new long one");
    assert.equal(users.getState().settingPassword, null);
    assert.equal(users.getState().passwordSet, "u-ada");
    assert.equal(users.getState().error, null);
  });

  it("shows the server's refusal to set a password", async () => {
    const { users } = await page();
    users.askSetPassword("u-pia");
    assert.equal(await users.setPassword("a new long one"), false);
    assert.equal(users.getState().error, "Setting the password failed: this user signs in without a password (a participant or the token-mode local user)");
    assert.equal(users.getState().settingPassword, "u-pia", "the field stays open");
    users.cancelSetPassword();
    assert.equal(users.getState().settingPassword, null);
  });

  it("offers account roles only to accounts (a participant comes from a join code)", () => {
    assert.deepEqual(roleChoices({ role: "member" }), ["admin", "member", "facilitator"]);
    assert.equal(roleChoices({ role: "participant" }), null);
    assert.deepEqual([0, 1, 3].map(sessionsLabel), ["no session", "1 session", "3 sessions"]);
  });
});

describe("workshops page", () => {
  it("lists the scenarios, makes a workshop and shows it first", async () => {
    const lab = new AccountsLab(me("facilitator", "Fay"));
    const workshops = new WorkshopsController(lab, 60_000);
    workshops.start();
    await workshops.refresh();
    await workshops.loadScenarios();
    assert.deepEqual(workshops.getState().scenarios?.map((s) => s.id), ["ddp", "zero"]);
    const first = await workshops.create("Monday", ["ddp"]);
    const second = await workshops.create("  Tuesday ", ["ddp", "zero"]);
    assert.equal(second?.title, "Tuesday");
    assert.deepEqual(workshops.getState().workshops.map((w) => w.id), [second?.id, first?.id]);
    workshops.stop();
  });

  it("checks the form before asking, and shows the server's refusal", async () => {
    assert.equal(newWorkshopProblem(" ", ["ddp"]), "a title is needed");
    assert.equal(newWorkshopProblem("Monday", []), "pick at least one scenario");
    assert.equal(newWorkshopProblem("Monday", ["ddp"]), null);
    const lab = new AccountsLab(me("member"));
    const workshops = new WorkshopsController(lab, 60_000);
    assert.equal(await workshops.create("Monday", []), null);
    assert.equal(workshops.getState().error, "Creating the workshop failed: pick at least one scenario");
    assert.equal(lab.sent.includes("create-workshop"), false);
    await workshops.refresh();
    assert.equal(workshops.getState().status, "error");
    assert.equal(workshops.getState().error, "Loading the workshops failed: a member may not run workshops");
  });

  it("shows the join link as a full address and links each participant's notebooks", () => {
    assert.equal(joinUrl("http://lab.test:3000/", "AB C"), "http://lab.test:3000/join/AB%20C");
    const card = workshopCard(
      {
        id: "ws-1",
        title: "Monday",
        joinCode: "K7Q2",
        scenarioIds: ["ddp", "gone"],
        closedAt: null,
        endedAt: null,
        startsAt: null,
        endsAt: null,
        createdAt: "2025-06-01T12:00:00Z",
        pace: "self",
        capacity: 60,
        sizing: { verdict: "fits", summary: "This lab can hold 60 participants.", details: [], advice: [] },
        participants: [{ id: "u-pia", name: "Pia", waiting: false, notebooks: [{ id: "nb-1", title: "DDP vs DataParallel" }] }],
      },
      "http://lab.test",
      [{ id: "ddp", title: "DDP vs DataParallel", source: "a.md", sourceTitle: "", summary: "" }],
    );
    assert.equal(card.joinUrl, "http://lab.test/join/K7Q2");
    assert.equal(card.open, true);
    assert.equal(card.scenarios, "DDP vs DataParallel · gone");
    assert.deepEqual(card.participants[0]?.notebooks, [{ id: "nb-1", title: "DDP vs DataParallel", href: "/notebooks/nb-1" }]);
  });
});

describe("share panel", () => {
  it("lists, shares, changes and stops sharing; a refusal is shown in the server's words", async () => {
    const lab = new AccountsLab(me("member"));
    lab.users.set("u-bob", user("Bob", "member"));
    lab.users.set("u-cy", user("Cy", "member"));
    const shares = new SharesController("nb-1", (command) => lab.send(command));
    await shares.open();
    assert.equal(shares.getState().open, true);
    assert.deepEqual(shares.getState().shares, []);
    assert.equal(await shares.share(" cy@lab.test ", "run"), true);
    assert.equal(await shares.share("bob@lab.test", "read"), true);
    assert.deepEqual(shares.getState().shares.map((s) => [s.email, s.access]), [["bob@lab.test", "read"], ["cy@lab.test", "run"]]);
    assert.equal(await shares.share("bob@lab.test", "run"), true);
    assert.equal(shares.getState().shares[0]?.access, "run");
    assert.equal(await shares.unshare("bob@lab.test"), true);
    assert.deepEqual(shares.getState().shares.map((s) => s.email), ["cy@lab.test"]);
    assert.equal(await shares.share("nobody@lab.test", "read"), false);
    assert.equal(shares.getState().error, "Sharing failed: nobody has the e-mail nobody@lab.test");
    assert.equal(await shares.share("  ", "read"), false);
    shares.close();
    assert.equal(shares.getState().open, false);
    assert.equal(shares.getState().error, null);
  });
});
