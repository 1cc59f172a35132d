/**
 * Each feature module's lab-op handlers, called directly over a real lab (a
 * real database in a temp directory, the real scenario catalog), without the
 * socket edge: what each op answers and refuses. The edge's own checks
 * (validation, authorisation) are tested through the socket elsewhere
 * (socket-api, authorization-matrix).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { openLab, type Lab } from "../../server/lab";
import { localHost } from "../../server/kernel/kernel-host";
import { LOCAL_USER } from "../../server/persistence";
import type { Actor } from "../../server/auth";
import { CommandError } from "../../server/errors";
import { accountHandlers } from "../../server/auth/account-handlers";
import { shareHandlers } from "../../server/auth/share-handlers";
import { catalogHandlers } from "../../server/notebook/catalog-handlers";
import { kernelHandlers } from "../../server/notebook/kernel-handlers";
import { scenarioHandlers } from "../../server/scenarios/scenario-handlers";
import { hostHandlers } from "../../server/hosts/host-handlers";
import { consoleRoom, workshopHandlers } from "../../server/workshops/workshop-handlers";
import { dispatchLab, type LabServices, type RoomMember } from "../../server/socket/lab-handler";
import { labHandlers } from "../../server/socket/lab-op-handlers";

const LIMIT = { timeout: 120_000 };
const PASSWORD = "correct horse battery staple";

function actor(userId: string, role: Actor["role"], workshopId: string | null = null): Actor {
  return { userId, name: userId, role, workshopId, sessionId: "test", expiresAt: new Date(Date.now() + 3_600_000) };
}

/** The connection a handler is given: records the rooms it joins. */
function member(): RoomMember & { rooms: string[] } {
  const rooms: string[] = [];
  return { rooms, join: (room) => void rooms.push(room) };
}

async function refusal(work: Promise<unknown>): Promise<CommandError> {
  const error = await work.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  assert.ok(error instanceof CommandError, `refused with a CommandError, got ${String(error)}`);
  return error;
}

describe("lab op handlers (feature modules)", () => {
  let dataDir: string;
  let lab: Lab;
  let services: LabServices;
  const admin = actor(LOCAL_USER.id, "admin");
  const socket = member();

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-handlers-"));
    lab = await openLab({ dataDir, host: () => localHost(), broadcast: () => undefined });
    services = { hub: lab.hub, drivers: lab.drivers, scenarios: lab.scenarios, hosts: lab.hosts, access: lab.access, workshops: lab.workshops, repositories: lab.repositories };
  });

  after(async () => {
    await lab.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("accounts: whoami says what the actor may do; a new account's bad field is refused in words", LIMIT, async () => {
    const accounts = accountHandlers(services);
    const { me } = await accounts.whoami({ op: "whoami" }, admin, socket);
    assert.equal(me.email, null, "the token-mode user's placeholder address is not shown");
    assert.equal(me.can.manageUsers, true);
    const bad = await refusal(accounts["create-user"]({ op: "create-user", name: "Ada", email: "ada@example.com", password: "short", role: "member" }, admin, socket));
    assert.equal(bad.code, "invalid");
    assert.match(bad.message, /a password has at least/);
    const { user } = await accounts["create-user"]({ op: "create-user", name: "Ada", email: "ada@example.com", password: PASSWORD, role: "member" }, admin, socket);
    const { users } = await accounts["list-users"]({ op: "list-users" }, admin, socket);
    assert.deepEqual(
      users.filter((listed) => listed.id === user.id || listed.you).map((listed) => [listed.email, listed.you]).sort(),
      [["ada@example.com", false], [LOCAL_USER.email, true]].sort(),
    );
  });

  it("notebooks: created untitled, renamed and deleted where driven, listed by state", LIMIT, async () => {
    const catalog = catalogHandlers(services);
    const { notebook } = await catalog["create-notebook"]({ op: "create-notebook" }, admin, socket);
    assert.equal(notebook.title, "Untitled");
    const renamed = await catalog["rename-notebook"]({ op: "rename-notebook", notebookId: notebook.id, title: "Renamed" }, admin, socket);
    assert.equal(renamed.notebook.title, "Renamed");
    await catalog["delete-notebook"]({ op: "delete-notebook", notebookId: notebook.id }, admin, socket);
    const active = await catalog["list-notebooks"]({ op: "list-notebooks" }, admin, socket);
    assert.ok(!active.notebooks.some((listed) => listed.id === notebook.id), "a deleted notebook leaves the active list");
    const deleted = await catalog["list-notebooks"]({ op: "list-notebooks", state: "deleted" }, admin, socket);
    assert.ok(deleted.notebooks.some((listed) => listed.id === notebook.id));
  });

  it("sharing: to an account by e-mail, never to nobody or to oneself", LIMIT, async () => {
    const { notebook } = await catalogHandlers(services)["create-notebook"]({ op: "create-notebook", title: "Shared" }, admin, socket);
    const sharing = shareHandlers(services);
    const nobody = await refusal(sharing["share-notebook"]({ op: "share-notebook", notebookId: notebook.id, email: "nobody@example.com", access: "read" }, admin, socket));
    assert.equal(nobody.code, "not-found");
    const bob = await lab.access.accounts.create({ name: "Bob", email: "bob@example.com", password: PASSWORD, role: "member" });
    const self = await refusal(sharing["share-notebook"]({ op: "share-notebook", notebookId: notebook.id, email: "bob@example.com", access: "read" }, actor(bob.id, "member"), socket));
    assert.equal(self.code, "invalid");
    const { shares } = await sharing["share-notebook"]({ op: "share-notebook", notebookId: notebook.id, email: "bob@example.com", access: "run" }, admin, socket);
    assert.deepEqual(shares.map((share) => [share.email, share.access]), [["bob@example.com", "run"]]);
    const removed = await sharing["share-notebook"]({ op: "share-notebook", notebookId: notebook.id, email: "bob@example.com", access: "none" }, admin, socket);
    assert.deepEqual(removed.shares, []);
  });

  it("kernels and hosts: nothing running, an unknown kernel or host is not found", LIMIT, async () => {
    const kernels = kernelHandlers(services);
    const listed = await kernels["list-kernels"]({ op: "list-kernels" }, admin, socket);
    assert.deepEqual(listed.kernels.kernels, []);
    const gone = await refusal(kernels["shutdown-listed-kernel"]({ op: "shutdown-listed-kernel", kernelRef: "k-unknown" }, admin, socket));
    assert.equal(gone.code, "not-found");
    const hosts = hostHandlers(services);
    assert.deepEqual((await hosts["list-hosts"]({ op: "list-hosts" }, admin, socket)).hosts, []);
    const noHost = await refusal(hosts["check-host"]({ op: "check-host", hostId: "gpu-1" }, admin, socket));
    assert.equal(noHost.code, "not-found");
  });

  it("scenarios: everyone's list, a participant's workshop only, an unknown one not found", LIMIT, async () => {
    const scenarios = scenarioHandlers(services);
    const all = await scenarios["list-scenarios"]({ op: "list-scenarios" }, admin, socket);
    assert.ok(all.scenarios.length > 0);
    const participant = await scenarios["list-scenarios"]({ op: "list-scenarios" }, actor("someone", "participant"), socket);
    assert.deepEqual(participant.scenarios, [], "a participant outside any workshop is offered nothing");
    const unknown = await refusal(scenarios["find-scenario-copy"]({ op: "find-scenario-copy", scenarioId: "no-such-scenario" }, admin, socket));
    assert.equal(unknown.code, "not-found");
    const first = all.scenarios[0]!;
    const found = await scenarios["find-scenario-copy"]({ op: "find-scenario-copy", scenarioId: first.id }, admin, socket);
    assert.equal(found.notebook, undefined, "no copy yet");
    assert.equal(found.freshTitle, first.title);
  });

  it("workshops: created, and a console joins its room for the live view", LIMIT, async () => {
    const workshops = workshopHandlers(services);
    const scenarioId = (await lab.scenarios.list())[0]!.id;
    const { workshop } = await workshops["create-workshop"]({ op: "create-workshop", title: "Friday class", scenarioIds: [scenarioId] }, admin, socket);
    const console = member();
    const opened = await workshops["workshop-console"]({ op: "workshop-console", workshopId: workshop.id }, admin, console);
    assert.equal(opened.console.workshop.title, "Friday class");
    assert.deepEqual(console.rooms, [consoleRoom(workshop.id)]);
    const listed = await workshops["list-workshops"]({ op: "list-workshops" }, admin, socket);
    assert.deepEqual(listed.workshops.map((each) => each.id), [workshop.id]);
  });

  it("dispatch: an op reaches its own handler in the joined table", LIMIT, async () => {
    const reply = await dispatchLab(labHandlers(services), "whoami", { op: "whoami" }, admin, socket);
    assert.equal(reply.me.id, LOCAL_USER.id);
  });
});
