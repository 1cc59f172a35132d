/**
 * The Python half of the kernel protocol is generated from the TypeScript
 * definition: the checked-in file must be current (the check fails on a
 * stale copy), the generator refuses what it cannot check in Python, and the
 * limits both ends enforce are pinned by shared fixtures (Python's side:
 * kernels/tests/test_wire_protocol.py). The host agent protocol's Python half
 * comes from the same generator and is pinned the same way
 * (kernels/protocol/agent-fixtures.json; Python's side:
 * kernels/tests/test_wire_agent_protocol.py).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { z } from "zod";
import { pythonPattern, renderPythonProtocol, UnsupportedSchema } from "../../scripts/kernel-protocol-python";
import { AGENT_PROTOCOL, GENERATOR, loadProtocolModule, PYTHON_PROTOCOL, REPO_ROOT } from "../../scripts/kernel-protocol-source";
import { agentBootSchema, agentMessageSchema, agentRequestSchema } from "../../server/core/protocol/agent-messages";

const scratch = mkdtempSync(path.join(os.tmpdir(), "mgpulab-protocol-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

function runCheck(...extra: string[]): { status: number | null; output: string } {
  const done = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, GENERATOR), "--check", ...extra], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return { status: done.status, output: `${done.stdout}${done.stderr}` };
}

describe("generated Python protocol", () => {
  it("is up to date with the TypeScript definition", () => {
    const { status, output } = runCheck();
    assert.equal(status, 0, output);
    assert.match(output, /is up to date/);
  });

  it("fails the check when the checked-in file is stale (a limit edited by hand)", () => {
    const copy = path.join(scratch, "protocol_generated.py");
    copyFileSync(path.join(REPO_ROOT, PYTHON_PROTOCOL), copy);
    const text = readFileSync(copy, "utf8");
    assert.ok(text.includes("max_length=64"), "the run id limit is in the generated file");
    writeFileSync(copy, text.replace("max_length=64", "max_length=65"));
    const { status, output } = runCheck("--file", copy);
    assert.equal(status, 1, output);
    assert.match(output, /is stale/);
    assert.match(output, /npm run protocol:generate/);
    assert.match(output, /max_length=65/, "the report shows the line that differs");
  });

  it("fails the check when the agent protocol's file is stale", () => {
    const copy = path.join(scratch, "agent_protocol_generated.py");
    copyFileSync(path.join(REPO_ROOT, AGENT_PROTOCOL.python), copy);
    const text = readFileSync(copy, "utf8");
    assert.ok(text.includes("^[A-Za-z0-9_-]{1,40}"), "the agent id pattern is in the generated file");
    writeFileSync(copy, text.replace("^[A-Za-z0-9_-]{1,40}", "^[A-Za-z0-9_./-]{1,40}"));
    const { status, output } = runCheck("--file", copy, "--protocol", "agent");
    assert.equal(status, 1, output);
    assert.match(output, /agent_protocol_generated\.py is stale/);
    assert.match(output, /agent-messages\.ts/);
    // the same copy restored is up to date: the check compares with the agent protocol, not the kernel's
    copyFileSync(path.join(REPO_ROOT, AGENT_PROTOCOL.python), copy);
    assert.equal(runCheck("--file", copy, "--protocol", "agent").status, 0);
  });

  it("names the agent protocol's functions after it, from the same generator", () => {
    const text = readFileSync(path.join(REPO_ROOT, AGENT_PROTOCOL.python), "utf8");
    for (const name of ["def read_agent_request(", "def check_agent_message(", "AGENT_MESSAGE_TYPES: Final", "def agent_hello_message(", "def check_agent_boot(", "def check_host_gpu(", 'AgentKernelState = Literal["queued", "running", "exited"]']) {
      assert.ok(text.includes(name), name);
    }
    assert.ok(!/read_kernel_request|KERNEL_MESSAGE_TYPES|not a kernel /.test(text), "no kernel protocol names leak into the agent's file");
  });

  it("fails the check when the file is missing", () => {
    const { status, output } = runCheck("--file", path.join(scratch, "absent.py"));
    assert.equal(status, 1, output);
  });

  it("refuses a schema feature it has no Python check for, instead of dropping the check", () => {
    const render = (field: z.ZodType): string =>
      renderPythonProtocol(
        {
          kernelMessageSchema: z.discriminatedUnion("type", [z.object({ type: z.literal("x"), field })]),
          kernelRequestSchema: z.discriminatedUnion("type", [z.object({ type: z.literal("y") })]),
        },
        { source: "s.ts", generator: "g.ts", messagesExport: "kernelMessageSchema", requestsExport: "kernelRequestSchema", naming: "Kernel" },
      );
    assert.match(render(z.string().max(3)), /max_length=3/);
    assert.throws(() => render(z.email()), UnsupportedSchema);
    assert.throws(() => render(z.string().regex(/^\d+$/)), UnsupportedSchema);
    assert.throws(() => render(z.union([z.string(), z.number()])), UnsupportedSchema);
    assert.throws(() => render(z.string().nullable().optional()), UnsupportedSchema);
  });

  it("translates a pattern only where JavaScript and Python read it alike", () => {
    assert.equal(pythonPattern("^[A-Za-z_][A-Za-z0-9_.:/-]{0,63}$"), "^[A-Za-z_][A-Za-z0-9_.:/-]{0,63}\\Z");
    assert.throws(() => pythonPattern("^a.b$"), UnsupportedSchema);
    assert.throws(() => pythonPattern("^\\w+$"), UnsupportedSchema);
    assert.throws(() => pythonPattern("^a$", "i"), UnsupportedSchema);
    assert.throws(() => pythonPattern("^(?=a)"), UnsupportedSchema);
  });
});

describe("protocol limits, pinned for both ends", () => {
  interface Refused {
    why: string;
    field: string;
    message: unknown;
  }
  const fixtures = JSON.parse(readFileSync(path.join(REPO_ROOT, "kernels/protocol/fixtures.json"), "utf8")) as {
    refusedKernelMessages: Refused[];
  };

  it("the server's schema refuses every refused fixture, at the field it names", async () => {
    const schema = (await loadProtocolModule()).kernelMessageSchema;
    assert.ok(schema instanceof z.ZodType);
    assert.ok(fixtures.refusedKernelMessages.length >= 10);
    for (const { why, field, message } of fixtures.refusedKernelMessages) {
      const parsed = schema.safeParse(message);
      assert.equal(parsed.success, false, why);
      const paths = parsed.error?.issues.map((issue) => issue.path.join(".")) ?? [];
      assert.ok(
        paths.some((issuePath) => issuePath === field || issuePath.startsWith(`${field}.`)),
        `${why}: expected an issue at ${field}, got ${JSON.stringify(paths)}`,
      );
    }
  });

  it("counts a string's characters in code points, as Python's len does", async () => {
    const schema = (await loadProtocolModule()).kernelMessageSchema;
    assert.ok(schema instanceof z.ZodType);
    const metric = { type: "metric", rank: 0, step: 0, values: { loss: 1 } };
    assert.equal(schema.safeParse({ ...metric, runId: "\u{1F600}".repeat(64) }).success, true);
    assert.equal(schema.safeParse({ ...metric, runId: "\u{1F600}".repeat(65) }).success, false);
  });
});

describe("agent protocol limits, pinned for both ends", () => {
  const fixtures = JSON.parse(readFileSync(path.join(REPO_ROOT, "kernels/protocol/agent-fixtures.json"), "utf8")) as {
    agentBoot: unknown;
    agentMessages: unknown[];
    agentRequests: unknown[];
    refusedAgentMessages: Array<{ why: string; field: string; message: unknown }>;
    refusedAgentRequests: Array<{ why: string; field: string; request: unknown }>;
    refusedAgentBoots: Array<{ why: string; field: string; boot: Record<string, unknown> }>;
  };
  const typesOf = (schema: z.ZodDiscriminatedUnion): string[] =>
    schema.options.map((option) => {
      const shape: unknown = option instanceof z.ZodObject ? option.shape : undefined;
      const literal = shape && typeof shape === "object" && "type" in shape ? shape.type : undefined;
      return literal instanceof z.ZodLiteral ? String(literal.value) : "";
    });
  const refusedAt = (schema: z.ZodType, value: unknown, field: string, why: string): void => {
    const parsed = schema.safeParse(value);
    assert.equal(parsed.success, false, why);
    const paths = parsed.error?.issues.map((issue) => issue.path.join(".")) ?? [];
    assert.ok(
      paths.some((issuePath) => issuePath === field || issuePath.startsWith(`${field}.`)),
      `${why}: expected an issue at ${field}, got ${JSON.stringify(paths)}`,
    );
  };

  it("every fixture message, request and the boot payload parse, and every type appears", () => {
    agentBootSchema.parse(fixtures.agentBoot);
    const messages = new Set(fixtures.agentMessages.map((message) => agentMessageSchema.parse(message).type));
    const requests = new Set(fixtures.agentRequests.map((request) => agentRequestSchema.parse(request).type));
    assert.deepEqual([...messages].sort(), typesOf(agentMessageSchema).sort());
    assert.deepEqual([...requests].sort(), typesOf(agentRequestSchema).sort());
  });

  it("the server's schemas refuse every refused fixture, at the field it names", () => {
    assert.ok(fixtures.refusedAgentMessages.length >= 10);
    for (const { why, field, message } of fixtures.refusedAgentMessages) refusedAt(agentMessageSchema, message, field, why);
    for (const { why, field, request } of fixtures.refusedAgentRequests) refusedAt(agentRequestSchema, request, field, why);
    const boot = agentBootSchema.parse(fixtures.agentBoot);
    for (const { why, field, boot: changes } of fixtures.refusedAgentBoots) refusedAt(agentBootSchema, { ...boot, ...changes }, field, why);
  });
});
