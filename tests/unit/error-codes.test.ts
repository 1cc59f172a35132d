/**
 * One converter for every edge: whatever was thrown becomes a code from the
 * core's union, the message as it was, and whether it is the server's fault;
 * the socket, the HTTP routes and the catalog's callers all agree on it.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ERROR_CODES, errorDetail, errorMessage, type ErrorCode } from "../../server/core/errors";
import { CommandError, DATABASE_UNREACHABLE, httpStatus, SERVER_STOPPING, SourceConflictError, toClientError } from "../../server/errors";
import { IpynbError } from "../../server/ipynb/ipynb-error";
import { InvalidDataError, NotFoundError, VersionConflictError } from "../../server/persistence/errors";
import { PredictionAlreadyCommittedError } from "../../server/persistence/prediction-repository";
import { ScenarioRequestError } from "../../server/scenarios/scenario-service";

describe("toClientError", () => {
  const cases: Array<[string, unknown, ErrorCode, boolean]> = [
    ["a refused command", new CommandError("busy", "a queued or running cell cannot be deleted; interrupt it first"), "busy", true],
    ["the kernel cap", new CommandError("limit", "this lab runs at most 2 kernels"), "limit", true],
    ["a notebook that does not exist", new NotFoundError("notebook", "nb-1"), "not-found", true],
    ["a stale version", new VersionConflictError("nb-1", 3, 4), "conflict", true],
    ["a prediction committed twice", new PredictionAlreadyCommittedError("a prediction for q was already committed (a)"), "conflict", true],
    ["bad stored data", new InvalidDataError("a notebook title cannot be empty"), "invalid", true],
    ["a value the catalog refuses", new ScenarioRequestError("parameter", "batch_size must be an int"), "invalid", true],
    ["a template the catalog does not know", new ScenarioRequestError("unknown", "no template dp-basics/nope"), "not-found", true],
    ["the catalog not answering", new CommandError("unavailable", "scenario catalog did not answer render within 60 s"), "unavailable", false],
    ["a bug", new TypeError("cannot read properties of undefined"), "internal", false],
    ["a thrown string", "boom", "internal", false],
  ];
  for (const [name, thrown, code, expected] of cases) {
    it(`${name}: ${code}, ${expected ? "expected" : "logged as a fault"}`, () => {
      const failure = toClientError(thrown);
      assert.equal(failure.code, code);
      assert.equal(failure.expected, expected);
      assert.equal(failure.error, thrown instanceof Error ? thrown.message : String(thrown), "the message is kept as it was");
    });
  }

  it("a database that is restarting: unavailable, in the user's words (not the driver's), logged", () => {
    const starting = Object.assign(new Error("Invalid `prisma.session.findUnique()` invocation: Database error. Code: `57P03`. Message: `the database system is not yet accepting connections`"), {
      code: "P2039",
      meta: { driverAdapterError: { name: "DriverAdapterError", cause: { originalCode: "57P03", kind: "postgres", code: "57P03" } } },
    });
    for (const thrown of [starting, Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" }), new Error("Connection terminated unexpectedly")]) {
      const failure = toClientError(thrown);
      assert.equal(failure.code, "unavailable");
      assert.equal(failure.expected, false);
      assert.equal(failure.error, DATABASE_UNREACHABLE);
    }
    assert.equal(toClientError(Object.assign(new Error("Unique constraint failed"), { code: "P2002" })).code, "internal", "the statement's own failure is not a database away");
    assert.deepEqual(toClientError(new Error("Cannot use a pool after calling end on the pool")), { code: "unavailable", error: SERVER_STOPPING, expected: true }, "a command that came in while the server stopped");
  });

  it("keeps what a conflict needs and where in a file a problem is", () => {
    assert.deepEqual(toClientError(new SourceConflictError("c1", "theirs")), {
      code: "conflict",
      error: "cell c1 was changed by someone else since you started editing it",
      conflict: { cellId: "c1", theirSource: "theirs" },
      expected: true,
    });
    const file = toClientError(new IpynbError("cells[3].source", "not a string"));
    assert.deepEqual([file.code, file.path], ["invalid", "cells[3].source"]);
  });
});

describe("httpStatus", () => {
  it("gives every code its status: a command refused is never a 500", () => {
    const statuses = Object.fromEntries(ERROR_CODES.map((code) => [code, httpStatus(code)]));
    assert.deepEqual(statuses, {
      invalid: 400,
      unauthorized: 401,
      "not-found": 404,
      conflict: 409,
      busy: 409,
      "too-large": 413,
      limit: 409,
      unavailable: 503,
      forbidden: 403,
      internal: 500,
    });
    assert.equal(httpStatus(toClientError(new CommandError("not-found", "no scenario x")).code), 404);
  });
});

describe("errorMessage and errorDetail (server/core/errors.ts)", () => {
  it("say an Error's message (or stack) and anything else thrown as text", () => {
    const error = new TypeError("cannot read properties of undefined");
    assert.equal(errorMessage(error), "cannot read properties of undefined");
    assert.equal(errorMessage("boom"), "boom");
    assert.equal(errorMessage(42), "42");
    assert.equal(errorMessage(undefined), "undefined");
    assert.equal(errorDetail(error), error.stack);
    assert.equal(errorDetail("boom"), "boom");
  });

  it("are the only copy: no hand-written `e instanceof Error ? e.message : String(e)` left in the lab's code", () => {
    const copy = /\b(\w+) instanceof Error \? \1\.message : String\(\1\)/;
    const root = path.resolve(__dirname, "..", "..");
    const found: string[] = [];
    for (const folder of ["server", "components", "app", "scripts"]) {
      for (const entry of readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !/\.tsx?$/.test(entry.name)) continue;
        const file = path.relative(root, path.join(entry.parentPath, entry.name));
        if (file === "server/core/errors.ts") continue;
        if (copy.test(readFileSync(path.join(root, file), "utf8"))) found.push(file);
      }
    }
    assert.deepEqual(found, [], "use errorMessage (server/core/errors.ts)");
  });
});
