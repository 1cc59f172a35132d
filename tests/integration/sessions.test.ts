/**
 * Sessions end where they should, and their open connections with them, at
 * once: sign-out, an admin removing the user, expiry. Sign-in and join are
 * rate-limited per client address with the configured limits. A forged or
 * missing cookie is a 401 or a refused handshake, never a stack trace.
 * Real Better Auth sessions over the real edge and socket.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { SessionEndReason } from "../../server/core/protocol/accounts-model";
import { joinWorkshop, labFetch, signIn } from "../helpers/lab-session";
import { SocketHarness, connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 60_000 };
const PASSWORD = "correct horse battery staple";
/** These tests sign in often; the limits themselves are rate-limits.test.ts's. */
const GENEROUS = { max: 1000, windowSeconds: 60 };

function ended(client: TestClient): Promise<{ reason: SessionEndReason; disconnected: Promise<unknown> }> {
  const disconnected = new Promise((resolve) => client.socket.once("disconnect", resolve));
  return new Promise((resolve) => client.socket.once("session:ended", (reason) => resolve({ reason, disconnected })));
}

describe("sessions", () => {
  let harness: SocketHarness;

  before(async () => {
    harness = await SocketHarness.start({ auth: { loginRateLimit: GENEROUS } });
  });
  after(async () => harness?.close());

  it("removing a user disconnects their open tabs at once, and their cookie opens nothing after", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Bo", email: "bo@example.com", password: PASSWORD, role: "member" });
    const cookie = await signIn(harness.url, user.email, PASSWORD);
    const tab = await harness.client(cookie);
    const otherTab = await harness.client(cookie);
    const endings = [ended(tab), ended(otherTab)];
    const admin = await harness.client();
    const removed = await admin.sendLab({ op: "remove-user", userId: user.id });
    assert.ok(removed.ok, removed.ok ? "" : removed.error);
    for (const ending of await Promise.all(endings)) {
      assert.equal(ending.reason, "removed");
      await ending.disconnected;
    }
    await assert.rejects(connectClient(harness.url, cookie), /unauthorized/);
    assert.equal((await labFetch(`${harness.url}/api/executions`, {}, cookie)).status, 401);
    // Their password is gone with them.
    const again = await fetch(`${harness.url}/api/auth/sign-in/email`, { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: JSON.stringify({ email: "bo@example.com", password: PASSWORD }) });
    assert.equal(again.status, 401);
    admin.close();
  });

  it("signing out ends that session's sockets, not the user's other sessions", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Cy", email: "cy@example.com", password: PASSWORD, role: "member" });
    const laptop = await signIn(harness.url, user.email, PASSWORD);
    const desktop = await signIn(harness.url, user.email, PASSWORD);
    const laptopTab = await harness.client(laptop);
    const desktopTab = await harness.client(desktop);
    const ending = ended(laptopTab);
    const out = await labFetch(`${harness.url}/api/auth/sign-out`, { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: "{}" }, laptop);
    assert.equal(out.status, 200);
    const { reason, disconnected } = await ending;
    assert.equal(reason, "signed-out");
    await disconnected;
    assert.ok(desktopTab.socket.connected, "the other session stays");
    assert.ok((await desktopTab.sendLab({ op: "whoami" })).ok);
    desktopTab.close();
  });

  it("changing one's password ends every other session of theirs; the old password no longer signs in", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Ed", email: "ed@example.com", password: PASSWORD, role: "member" });
    const laptop = await signIn(harness.url, user.email, PASSWORD);
    const phone = await signIn(harness.url, user.email, PASSWORD);
    const phoneTab = await harness.client(phone);
    const ending = ended(phoneTab);
    const changed = await labFetch(
      `${harness.url}/api/auth/change-password`,
      { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: JSON.stringify({ currentPassword: PASSWORD, newPassword: "a new horse battery", revokeOtherSessions: true }) },
      laptop,
    );
    assert.equal(changed.status, 200, await changed.clone().text());
    const { reason, disconnected } = await ending;
    assert.equal(reason, "revoked");
    await disconnected;
    // This browser got a new session with the answer; the old password is over.
    const fresh = changed.headers.getSetCookie().find((line) => line.startsWith("mgpulab.session_token="))!.split(";")[0]!;
    assert.ok((await (await harness.client(fresh)).sendLab({ op: "whoami" })).ok);
    await assert.rejects(signIn(harness.url, user.email, PASSWORD), /answered 401/);
    await signIn(harness.url, user.email, "a new horse battery");
    // A wrong current password changes nothing.
    const wrong = await labFetch(
      `${harness.url}/api/auth/change-password`,
      { method: "POST", headers: { "Content-Type": "application/json", Origin: harness.url }, body: JSON.stringify({ currentPassword: "not it at all", newPassword: "yet another horse", revokeOtherSessions: true }) },
      fresh,
    );
    assert.equal(wrong.status, 400);
    await signIn(harness.url, user.email, "a new horse battery");
  });

  it("an admin setting a user's password ends that user's sessions at once", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Fi", email: "fi@example.com", password: PASSWORD, role: "member" });
    const tab = await harness.client(await signIn(harness.url, user.email, PASSWORD));
    const ending = ended(tab);
    const admin = await harness.client();
    const reply = await admin.sendLab({ op: "set-user-password", userId: user.id, password: "reset by the admin" });
    assert.ok(reply.ok, reply.ok ? "" : reply.error);
    assert.equal((await ending).reason, "revoked");
    await assert.rejects(signIn(harness.url, user.email, PASSWORD), /answered 401/);
    await signIn(harness.url, user.email, "reset by the admin");
    const short = await admin.sendLab({ op: "set-user-password", userId: user.id, password: "short" });
    assert.equal(short.ok, false);
    admin.close();
  });

  it("a role an admin changes counts on the user's open tabs from their next event, both ways", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Gus", email: "gus@example.com", password: PASSWORD, role: "member" });
    const tab = await harness.client(await signIn(harness.url, user.email, PASSWORD));
    const admin = await harness.client();
    const refused = await tab.sendLab({ op: "list-users" });
    assert.equal(refused.ok ? "ok" : refused.code, "forbidden");
    const promoted = await admin.sendLab({ op: "set-user-role", userId: user.id, role: "admin" });
    assert.ok(promoted.ok, promoted.ok ? "" : promoted.error);
    const listed = await tab.sendLab({ op: "list-users" });
    assert.ok(listed.ok, listed.ok ? "" : listed.error);
    const me = await tab.sendLab({ op: "whoami" });
    assert.equal(me.ok ? me.me?.role : me.error, "admin");
    // Taking a role away is what must not lag: the tab is refused on the very next event.
    const demoted = await admin.sendLab({ op: "set-user-role", userId: user.id, role: "member" });
    assert.ok(demoted.ok, demoted.ok ? "" : demoted.error);
    const again = await tab.sendLab({ op: "list-users" });
    assert.equal(again.ok ? "ok" : again.code, "forbidden");
    tab.close();
    admin.close();
  });

  it("a forged or tampered cookie is refused: 401 over HTTP, no socket", LIMIT, async () => {
    const forged = [`mgpulab.session_token=${"a".repeat(32)}.${"b".repeat(43)}`, harness.cookie.slice(0, -3) + "xyz", "mgpulab.session_token=", "mgpulab.session_token=%ZZ"];
    for (const cookie of forged) {
      const response = await labFetch(`${harness.url}/api/executions`, {}, cookie);
      assert.equal(response.status, 401, cookie);
      assert.deepEqual(Object.keys((await response.json()) as object).sort(), ["code", "error"]);
      await assert.rejects(connectClient(harness.url, cookie), /unauthorized/);
    }
  });

  it("joining again from the same browser is the same participant; a closed room lets nobody new in", LIMIT, async () => {
    const facilitator = await harness.lab.access.accounts.create({ name: "Ge", email: "ge@example.com", password: PASSWORD, role: "facilitator" });
    const workshop = await harness.lab.workshops.create(facilitator.id, "Again", ["dp-basics"]);
    const first = await joinWorkshop(harness.url, workshop.joinCode, "Ha");
    const again = await joinWorkshop(harness.url, workshop.joinCode, "Ha", first);
    assert.equal(again, first);
    assert.equal(await harness.lab.db.prisma.user.count({ where: { workshopId: workshop.id } }), 1);
    await harness.lab.db.prisma.workshop.update({ where: { id: workshop.id }, data: { closedAt: new Date() } });
    await assert.rejects(joinWorkshop(harness.url, workshop.joinCode, "Late"), /answered 404: .*no open workshop has this code/);
  });
});

describe("session expiry", () => {
  let harness: SocketHarness;
  before(async () => {
    harness = await SocketHarness.start({ auth: { sessionSeconds: 2, loginRateLimit: GENEROUS } });
  });
  after(async () => harness?.close());

  it("a session that expires ends its open socket when it does, and its cookie is refused after", LIMIT, async () => {
    const user = await harness.lab.access.accounts.create({ name: "Di", email: "di@example.com", password: PASSWORD, role: "member" });
    const cookie = await signIn(harness.url, user.email, PASSWORD);
    const tab = await harness.client(cookie);
    const { reason, disconnected } = await ended(tab);
    assert.equal(reason, "expired");
    await disconnected;
    const stored = await harness.lab.db.prisma.session.findFirstOrThrow({ where: { userId: user.id } });
    assert.ok(stored.expiresAt.getTime() <= Date.now(), "ended no earlier than the session's end");
    await assert.rejects(connectClient(harness.url, cookie), /unauthorized/);
  });
});
