/**
 * The authorization matrix, generated: every role × every resource × every
 * action, over the real socket and HTTP edge, signed in as real users
 * (Better Auth sessions). Each cell is its own test. The expected answers
 * come from the rules as the issue states them (EXPECTED below), written
 * apart from the policy (server/auth/access-policy.ts), so a policy that
 * drifts fails here. A refusal about a notebook or execution must read
 * word for word like the answer for an id that does not exist.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { NotebookAnswer, NotebookOp, NotebookRefusal } from "../../server/core/protocol/ops-notebook";
import type { LabAnswer, LabOp } from "../../server/core/protocol/ops-lab";
import { LOCAL_USER } from "../../server/persistence";
import { joinWorkshop, labFetch, signIn } from "../helpers/lab-session";
import { SocketHarness, connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 60_000 };
const PASSWORD = "correct horse battery staple";

type ActorName = "admin" | "memberA" | "memberB" | "facilitatorF" | "facilitatorG" | "participantP" | "participantQ";
type NotebookName = "A-private" | "A-shared-read" | "A-shared-run" | "P-copy" | "Q-copy" | "guessed";
type Level = "none" | "read" | "run" | "edit";

/** What each actor may do with each notebook, as the issue states it. */
const EXPECTED: Record<NotebookName, Partial<Record<ActorName, Level>>> = {
  // A member's own notebook is theirs alone; an admin manages users, not others' notebooks.
  "A-private": { memberA: "edit" },
  "A-shared-read": { memberA: "edit", memberB: "read" },
  "A-shared-run": { memberA: "edit", memberB: "run" },
  // A participant has their own copy; their workshop's facilitator sees it (and may restart it), nobody else.
  "P-copy": { participantP: "edit", facilitatorF: "run" },
  "Q-copy": { participantQ: "edit", facilitatorG: "run" },
  guessed: {},
};

const ACTORS: ActorName[] = ["admin", "memberA", "memberB", "facilitatorF", "facilitatorG", "participantP", "participantQ"];
const RANK: Record<Level, number> = { none: 0, read: 1, run: 2, edit: 3 };

type Action = { name: string; needs: Level; kind: "notebook" | "lab" | "http"; extra?: (actor: ActorName, notebook: NotebookName) => "allowed" | "forbidden" | "hidden" | null };

/** Actions on one notebook, with the access each needs. */
const NOTEBOOK_ACTIONS: Action[] = [
  { name: "open", needs: "read", kind: "notebook" },
  { name: "presence", needs: "read", kind: "notebook" },
  { name: "interrupt", needs: "run", kind: "notebook" },
  // Completion and inspection read attributes in the kernel (user code runs): as running a cell.
  { name: "complete", needs: "run", kind: "notebook" },
  { name: "inspect", needs: "run", kind: "notebook" },
  { name: "set-source", needs: "edit", kind: "notebook" },
  { name: "set-kernel-spec", needs: "edit", kind: "notebook" },
  { name: "commit-prediction", needs: "edit", kind: "notebook" },
  { name: "rename-notebook", needs: "edit", kind: "lab" },
  { name: "list-shares", needs: "edit", kind: "lab" },
  {
    name: "duplicate-notebook",
    needs: "read",
    kind: "lab",
    // Copying needs the right to create notebooks, which participants do not have.
    extra: (actor, notebook) => (actor.startsWith("participant") && level(actor, notebook) !== "none" ? "forbidden" : null),
  },
  {
    name: "shutdown-kernel",
    needs: "run",
    kind: "lab",
    // An admin stops any kernel: a held GPU is everyone's problem.
    extra: (actor, notebook) => (actor === "admin" && notebook !== "guessed" ? "allowed" : null),
  },
  // The console restarting one participant's kernel: whoever may run the notebook.
  { name: "restart-kernel", needs: "run", kind: "lab" },
  { name: "GET export", needs: "read", kind: "http" },
  { name: "GET execution metrics", needs: "read", kind: "http" },
];

/** Actions of a role, about no one notebook: who may do each. */
const LAB_ACTIONS: Array<{ name: string; allowed: ActorName[] }> = [
  { name: "whoami", allowed: ACTORS },
  { name: "list-notebooks", allowed: ACTORS },
  { name: "create-notebook", allowed: ["admin", "memberA", "memberB", "facilitatorF", "facilitatorG"] },
  { name: "POST import", allowed: ["admin", "memberA", "memberB", "facilitatorF", "facilitatorG"] },
  { name: "list-users", allowed: ["admin"] },
  { name: "set-user-role", allowed: ["admin"] },
  { name: "set-user-password", allowed: ["admin"] },
  { name: "list-hosts", allowed: ["admin", "memberA", "memberB", "facilitatorF", "facilitatorG"] },
  { name: "list-workshops", allowed: ["facilitatorF", "facilitatorG"] },
  { name: "create-workshop", allowed: ["facilitatorF", "facilitatorG"] },
  { name: "my-workshop", allowed: ["participantP", "participantQ"] },
  // The kernel list names member A's notebook to A only; an admin sees A's kernel by its owner alone
  // (no title, no id), and only an admin may shut a kernel down by the opaque ref such a row carries.
  { name: "list-kernels shows A's kernel", allowed: ["memberA"] },
  { name: "list-kernels shows A's kernel by its owner only", allowed: ["admin"] },
  { name: "shutdown-listed-kernel", allowed: ["admin"] },
];

type WorkshopName = "W1" | "W2" | "guessed-workshop";
/** A workshop is its facilitator's alone: F runs W1, G runs W2. */
const WORKSHOP_OWNER: Record<WorkshopName, ActorName | null> = { W1: "facilitatorF", W2: "facilitatorG", "guessed-workshop": null };
const WORKSHOP_ACTIONS = ["workshop-console", "update-workshop", "workshop-broadcast", "GET summary.csv"] as const;

/** Its facilitator may; another facilitator gets what a missing id gets; a role that runs no workshops is refused outright. */
function workshopExpectation(actor: ActorName, workshop: WorkshopName): "allowed" | "forbidden" | "hidden" {
  if (WORKSHOP_OWNER[workshop] === actor) return "allowed";
  return actor.startsWith("facilitator") ? "hidden" : "forbidden";
}

function level(actor: ActorName, notebook: NotebookName): Level {
  return EXPECTED[notebook][actor] ?? "none";
}

function expectation(action: Action, actor: ActorName, notebook: NotebookName): "allowed" | "forbidden" | "hidden" {
  const special = action.extra?.(actor, notebook);
  if (special) return special;
  return RANK[level(actor, notebook)] >= RANK[action.needs] ? "allowed" : "hidden";
}

const NOTEBOOK_FILE = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells: [{ cell_type: "code", source: "1", metadata: {}, outputs: [], execution_count: null }] });

describe("authorization matrix", () => {
  let harness: SocketHarness;
  const cookies = new Map<ActorName, string>();
  const clients = new Map<ActorName, TestClient>();
  const userIds = new Map<ActorName | "bystander", string>();
  const notebooks = new Map<NotebookName, string>();
  const executions = new Map<NotebookName, string>();
  const cellOf = new Map<NotebookName, string>();
  const workshops = new Map<WorkshopName, string>();

  before(async () => {
    harness = await SocketHarness.start({ auth: { loginRateLimit: { max: 1000, windowSeconds: 60 }, joinRateLimit: { max: 1000, windowSeconds: 60 } } });
    const { accounts } = harness.lab.access;
    cookies.set("admin", harness.cookie);
    userIds.set("admin", LOCAL_USER.id);
    for (const [name, role] of [["memberA", "member"], ["memberB", "member"], ["facilitatorF", "facilitator"], ["facilitatorG", "facilitator"]] as const) {
      const user = await accounts.create({ name, email: `${name.toLowerCase()}@example.com`, password: PASSWORD, role });
      userIds.set(name, user.id);
      cookies.set(name, await signIn(harness.url, user.email, PASSWORD));
    }
    userIds.set("bystander", (await accounts.create({ name: "bystander", email: "bystander@example.com", password: PASSWORD, role: "member" })).id);
    const w1 = await harness.lab.workshops.create(userIds.get("facilitatorF")!, "W1", ["dp-basics"]);
    const w2 = await harness.lab.workshops.create(userIds.get("facilitatorG")!, "W2", ["dp-basics"]);
    workshops.set("W1", w1.id);
    workshops.set("W2", w2.id);
    workshops.set("guessed-workshop", "cm0000000000000000guessedws");
    cookies.set("participantP", await joinWorkshop(harness.url, w1.joinCode, "P"));
    cookies.set("participantQ", await joinWorkshop(harness.url, w2.joinCode, "Q"));
    for (const [name, workshopId] of [["participantP", w1.id], ["participantQ", w2.id]] as const) {
      const user = await harness.lab.db.prisma.user.findFirstOrThrow({ where: { workshopId, role: "participant" } });
      userIds.set(name, user.id);
    }
    for (const actor of ACTORS) clients.set(actor, await harness.client(cookies.get(actor)));

    const prisma = harness.lab.db.prisma;
    const memberA = userIds.get("memberA")!;
    for (const name of ["A-private", "A-shared-read", "A-shared-run"] as const) notebooks.set(name, await harness.createNotebook(name, memberA));
    await prisma.notebookShare.create({ data: { notebookId: notebooks.get("A-shared-read")!, userId: userIds.get("memberB")!, access: "read" } });
    await prisma.notebookShare.create({ data: { notebookId: notebooks.get("A-shared-run")!, userId: userIds.get("memberB")!, access: "run" } });
    for (const [name, owner] of [["P-copy", "participantP"], ["Q-copy", "participantQ"]] as const) {
      notebooks.set(name, (await prisma.notebook.findFirstOrThrow({ where: { ownerId: userIds.get(owner)! } })).id);
    }
    notebooks.set("guessed", "cm0000000000000000guessed");
    // A finished run with one execution per real notebook: the chart route's target.
    for (const [name, notebookId] of notebooks) {
      if (name === "guessed") {
        executions.set(name, "cm0000000000000000guessedexec");
        cellOf.set(name, "cell-1");
        continue;
      }
      const cell = await prisma.cell.findFirstOrThrow({ where: { notebookId }, orderBy: { position: "asc" } });
      cellOf.set(name, cell.id);
      const run = await prisma.kernelRun.create({ data: { notebookId, host: "test", deviceMode: "cpu", status: "finished" } });
      executions.set(name, (await prisma.cellExecution.create({ data: { runId: run.id, cellId: cell.id, source: "", status: "ok" } })).id);
    }
  });

  after(async () => {
    for (const client of clients.values()) client.close();
    await harness?.close();
  });

  let cells = 0;
  for (const notebook of Object.keys(EXPECTED) as NotebookName[]) {
    for (const action of NOTEBOOK_ACTIONS) {
      for (const actor of ACTORS) {
        const expected = expectation(action, actor, notebook);
        cells += 1;
        it(`${actor} · ${action.name} · ${notebook} → ${expected}`, LIMIT, async () => {
          const id = notebooks.get(notebook)!;
          const answer = await attempt(action, actor, notebook);
          if (expected === "allowed") {
            assert.ok(answer.ok, `${actor} should be able to ${action.name} ${notebook}: ${answer.error}`);
            return;
          }
          assert.equal(answer.ok, false, `${actor} must not ${action.name} ${notebook}`);
          if (expected === "forbidden") {
            assert.equal(answer.code, "forbidden");
            return;
          }
          // Hidden: exactly what a missing id gets.
          const what = action.name === "GET execution metrics" ? `execution ${executions.get(notebook)}` : `notebook ${id}`;
          assert.equal(answer.code, "not-found");
          assert.equal(answer.error, `${what} not found`);
          if (answer.status !== undefined) assert.equal(answer.status, 404);
        });
      }
    }
  }
  for (const action of LAB_ACTIONS) {
    for (const actor of ACTORS) {
      const allowed = action.allowed.includes(actor);
      cells += 1;
      it(`${actor} · ${action.name} → ${allowed ? "allowed" : "forbidden"}`, LIMIT, async () => {
        const answer = await labAttempt(action.name, actor);
        if (allowed) assert.ok(answer.ok, `${actor} should be able to ${action.name}: ${answer.error}`);
        else {
          assert.equal(answer.ok, false, `${actor} must not ${action.name}`);
          assert.equal(answer.code, "forbidden");
        }
      });
    }
  }
  for (const workshop of Object.keys(WORKSHOP_OWNER) as WorkshopName[]) {
    for (const action of WORKSHOP_ACTIONS) {
      for (const actor of ACTORS) {
        const expected = workshopExpectation(actor, workshop);
        cells += 1;
        it(`${actor} · ${action} · ${workshop} → ${expected}`, LIMIT, async () => {
          const id = workshops.get(workshop)!;
          const answer = await workshopAttempt(action, actor, id);
          if (expected === "allowed") {
            assert.ok(answer.ok, `${actor} should be able to ${action} ${workshop}: ${answer.error}`);
            return;
          }
          assert.equal(answer.ok, false, `${actor} must not ${action} ${workshop}`);
          if (expected === "forbidden") assert.equal(answer.code, "forbidden");
          else {
            assert.equal(answer.code, "not-found");
            assert.equal(answer.error, `workshop ${id} not found`);
            if (answer.status !== undefined) assert.equal(answer.status, 404);
          }
        });
      }
    }
  }
  const anonymous = ["GET /api/executions", "GET export", "POST import", "GET execution metrics", "socket handshake", "GET /"];
  for (const what of anonymous) {
    cells += 1;
    it(`no session · ${what} → unauthorized`, LIMIT, async () => {
      if (what === "socket handshake") {
        await assert.rejects(connectClient(harness.url, ""), /unauthorized/);
        return;
      }
      const path =
        what === "GET /api/executions" ? "/api/executions" : what === "GET export" ? `/api/notebooks/${notebooks.get("A-private")}/export` : what === "POST import" ? "/api/notebooks/import" : what === "GET /" ? "/" : `/api/executions/${executions.get("A-private")}/metrics`;
      const init: RequestInit = what === "POST import" ? { method: "POST", body: NOTEBOOK_FILE, headers: { "Content-Type": "application/x-ipynb+json" } } : { redirect: "manual" };
      const response = await labFetch(`${harness.url}${path}`, init, null);
      // A loopback lab whose only accounts... has accounts here: pages redirect to sign-in, the API answers 401.
      if (what === "GET /") {
        assert.equal(response.status, 302);
        assert.match(response.headers.get("location") ?? "", /^\/login/);
      } else {
        assert.equal(response.status, 401);
        assert.equal(((await response.json()) as { code: string }).code, "unauthorized");
      }
    });
  }

  it("prints the matrix's size", () => {
    const workshopCells = Object.keys(WORKSHOP_OWNER).length * WORKSHOP_ACTIONS.length * ACTORS.length;
    const expectedCells = Object.keys(EXPECTED).length * NOTEBOOK_ACTIONS.length * ACTORS.length + LAB_ACTIONS.length * ACTORS.length + workshopCells + anonymous.length;
    assert.equal(cells, expectedCells);
    console.log(
      `authorization matrix: ${Object.keys(EXPECTED).length} notebooks × ${NOTEBOOK_ACTIONS.length} actions × ${ACTORS.length} roles + ${LAB_ACTIONS.length} lab actions × ${ACTORS.length} roles + ` +
        `${Object.keys(WORKSHOP_OWNER).length} workshops × ${WORKSHOP_ACTIONS.length} actions × ${ACTORS.length} roles + ${anonymous.length} without a session = ${cells} cells`,
    );
  });

  type Answer = { ok: boolean; code?: string; error?: string; status?: number };

  async function attempt(action: Action, actor: ActorName, notebook: NotebookName): Promise<Answer> {
    const client = clients.get(actor)!;
    const notebookId = notebooks.get(notebook)!;
    const cellId = cellOf.get(notebook)!;
    if (action.kind === "http") {
      const path = action.name === "GET export" ? `/api/notebooks/${notebookId}/export` : `/api/executions/${executions.get(notebook)}/metrics`;
      const response = await labFetch(`${harness.url}${path}`, {}, cookies.get(actor)!);
      if (response.ok) return { ok: true, status: response.status };
      const body = (await response.json()) as { error: string; code: string };
      return { ok: false, code: body.code, error: body.error, status: response.status };
    }
    if (action.kind === "lab") {
      const command =
        action.name === "rename-notebook" ? { op: action.name, notebookId, title: `renamed by ${actor}` } : { op: action.name, notebookId };
      return fromAck(await client.sendLab(command));
    }
    // A notebook command other than open needs the notebook opened first (when it may be).
    if (action.name !== "open" && expectation(action, actor, notebook) === "allowed") {
      const opened = await client.send({ op: "open", notebookId });
      assert.ok(opened.ok, `open before ${action.name}`);
    }
    const commands: Record<string, object> = {
      open: { op: "open", notebookId },
      presence: { op: "presence", notebookId, visible: true },
      interrupt: { op: "interrupt", notebookId },
      complete: { op: "complete", notebookId, code: "import os\nos.pa", cursor: 15 },
      inspect: { op: "inspect", notebookId, code: "len(", cursor: 4 },
      "set-source": { op: "set-source", notebookId, cellId, source: `# edited by ${actor}`, force: true },
      "set-kernel-spec": { op: "set-kernel-spec", notebookId, hostId: "local", gpus: 0 },
      "commit-prediction": { op: "commit-prediction", notebookId, questionId: "dp-basics/claim", question: "q?", choice: "yes" },
    };
    const reply = await client.send(commands[action.name]);
    // Past the gate, a command may still be refused on its merits (a templated cell's code, a question
    // this notebook does not ask): that is not an authorization answer.
    if (!reply.ok && !refusedByGate(reply)) return { ok: true };
    return fromAck(reply);
  }

  async function workshopAttempt(action: (typeof WORKSHOP_ACTIONS)[number], actor: ActorName, workshopId: string): Promise<Answer> {
    if (action === "GET summary.csv") {
      const response = await labFetch(`${harness.url}/api/workshops/${workshopId}/summary.csv`, {}, cookies.get(actor)!);
      if (response.ok) return { ok: true, status: response.status };
      const body = (await response.json()) as { error: string; code: string };
      return { ok: false, code: body.code, error: body.error, status: response.status };
    }
    const commands = {
      "workshop-console": { op: "workshop-console", workshopId },
      "update-workshop": { op: "update-workshop", workshopId, pace: "self" },
      "workshop-broadcast": { op: "workshop-broadcast", workshopId, message: `hello from ${actor}` },
    };
    return fromAck(await clients.get(actor)!.sendLab(commands[action]));
  }

  async function labAttempt(name: string, actor: ActorName): Promise<Answer> {
    const client = clients.get(actor)!;
    switch (name) {
      case "POST import": {
        const response = await labFetch(`${harness.url}/api/notebooks/import`, { method: "POST", body: NOTEBOOK_FILE, headers: { "Content-Type": "application/x-ipynb+json" } }, cookies.get(actor)!);
        if (response.ok) return { ok: true };
        const body = (await response.json()) as { error: string; code: string };
        return { ok: false, code: body.code, error: body.error };
      }
      case "set-user-password":
        // A user nobody signs in as here: their sessions end with it.
        return fromAck(await client.sendLab({ op: "set-user-password", userId: userIds.get("bystander")!, password: PASSWORD }));
      case "set-user-role":
        return fromAck(await client.sendLab({ op: "set-user-role", userId: userIds.get("memberB")!, role: "member" }));
      case "create-notebook":
        return fromAck(await client.sendLab({ op: "create-notebook", title: `by ${actor}` }));
      case "create-workshop":
        return fromAck(await client.sendLab({ op: "create-workshop", title: `by ${actor}`, scenarioIds: ["dp-basics"] }));
      case "list-kernels shows A's kernel": {
        await kernelOfA();
        const list = await client.sendLab({ op: "list-kernels" });
        if (!list.ok) return fromAck(list);
        return list.kernels?.kernels.some((kernel) => kernel.notebookId === notebooks.get("A-private")) ? { ok: true } : { ok: false, code: "forbidden", error: "" };
      }
      case "list-kernels shows A's kernel by its owner only": {
        await kernelOfA();
        const list = await client.sendLab({ op: "list-kernels" });
        if (!list.ok) return fromAck(list);
        if (actor !== "memberA") assert.ok(!JSON.stringify(list.kernels).includes(notebooks.get("A-private")!), `${actor}'s kernel list holds the id of A's private notebook`);
        for (const kernel of list.kernels?.kernels ?? []) {
          if (kernel.notebookId === null) assert.match(kernel.title, /^a notebook of /, `${actor} sees the title of a notebook they may not read`);
        }
        const byOwner = list.kernels?.kernels.some((kernel) => kernel.notebookId === null && kernel.title === "a notebook of memberA");
        return byOwner ? { ok: true } : { ok: false, code: "forbidden", error: "" };
      }
      case "shutdown-listed-kernel": {
        await kernelOfA();
        const list = await client.sendLab({ op: "list-kernels" });
        const row = list.ok ? list.kernels?.kernels.find((kernel) => kernel.notebookId === null) : undefined;
        // Whoever got no such row tries a made-up ref: the rule refuses it before anything is looked up.
        const answer = await client.sendLab({ op: "shutdown-listed-kernel", kernelRef: row?.kernelRef ?? "madeUpReference00000000" });
        if (answer.ok) {
          assert.ok(!answer.kernels?.kernels.some((kernel) => kernel.kernelRef === row?.kernelRef), "the kernel was shut down");
          kernelStarted = null; // A's kernel is started again for the cells that need it
        }
        return fromAck(answer);
      }
      default:
        return fromAck(await client.sendLab({ op: name }));
    }
  }

  /** A live kernel for member A's private notebook (the kernel list action), started once. */
  let kernelStarted: Promise<void> | null = null;
  function kernelOfA(): Promise<void> {
    kernelStarted ??= (async () => {
      const memberA = await harness.client(cookies.get("memberA"));
      const notebookId = notebooks.get("A-private")!;
      await memberA.send({ op: "open", notebookId });
      const run = await memberA.run(notebookId, { [cellOf.get("A-private")!]: "x = 1" });
      assert.ok(run.ok, run.ok ? "" : run.error);
      await memberA.waitFor((event) => event.type === "cell-finished");
      memberA.close();
    })();
    return kernelStarted;
  }
});

function refusedByGate(reply: NotebookRefusal): boolean {
  return reply.code === "forbidden" || reply.code === "unauthorized" || (reply.code === "not-found" && reply.error.startsWith("notebook "));
}

function fromAck(reply: LabAnswer<LabOp> | NotebookAnswer<NotebookOp>): { ok: boolean; code?: string; error?: string } {
  return reply.ok ? { ok: true } : { ok: false, code: reply.code, error: reply.error };
}
