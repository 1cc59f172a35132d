/**
 * Sign-in, joining a workshop, sign-out and changing the password as the browser sends them (JSON
 * POSTs) and reads their answers, against fake fetches that answer as Better
 * Auth does; and where the sign-in page may send the browser next.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { changePassword, joinWorkshop, landingAfterSignIn, passwordProblem, safeNext, signIn, signOut, tooManyAttempts, workshopInfo } from "../../components/shell/model/auth-client";

interface Sent {
  url: string;
  method: string | undefined;
  contentType: string | null;
  body: unknown;
}

function server(status: number, body: string, headers: Record<string, string> = {}): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fake: typeof fetch = (input, init) => {
    sent.push({
      url: String(input),
      method: init?.method,
      contentType: new Headers(init?.headers).get("Content-Type"),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : init?.body,
    });
    return Promise.resolve(new Response(body, { status, headers }));
  };
  return { fetch: fake, sent };
}

describe("safeNext", () => {
  const cases: Array<[string | string[] | undefined, string]> = [
    ["/notebooks/abc", "/notebooks/abc"],
    ["/notebooks/abc?x=1#y", "/notebooks/abc?x=1#y"],
    ["/", "/"],
    [undefined, "/"],
    ["", "/"],
    [["/a", "/b"], "/"],
    ["//evil.example", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example/", "/"],
    ["javascript:alert(1)", "/"],
    ["notebooks/abc", "/"],
    ["/\t/evil.example", "/"],
  ];
  for (const [next, expected] of cases) {
    it(`${JSON.stringify(next)} → ${expected}`, () => assert.equal(safeNext(next), expected));
  }
});

describe("signIn", () => {
  it("POSTs the e-mail and password as JSON and succeeds on 200", async () => {
    const { fetch, sent } = server(200, '{"token":"x","user":{}}');
    assert.deepEqual(await signIn("  ada@lab.test ", "pw", fetch), { ok: true });
    assert.deepEqual(sent, [{ url: "/api/auth/sign-in/email", method: "POST", contentType: "application/json", body: { email: "ada@lab.test", password: "pw" } }]);
  });

  it("shows the server's message on 401", async () => {
    const { fetch } = server(401, '{"message":"Invalid email or password","code":"INVALID_EMAIL_OR_PASSWORD"}');
    assert.deepEqual(await signIn("ada@lab.test", "wrong", fetch), { ok: false, error: "Invalid email or password" });
  });

  it("says how long to wait when rate-limited", async () => {
    const { fetch } = server(429, "", { "X-Retry-After": "42" });
    assert.deepEqual(await signIn("ada@lab.test", "pw", fetch), { ok: false, error: "Too many attempts; try again in 42 s" });
    assert.equal(tooManyAttempts(null), "Too many attempts; try again later");
    assert.equal(tooManyAttempts("soon"), "Too many attempts; try again later");
  });

  it("says what it got when the answer is no message", async () => {
    const { fetch } = server(502, "<html>bad gateway</html>");
    const result = await signIn("ada@lab.test", "pw", fetch);
    assert.equal(result.ok, false);
    assert.match(result.ok ? "" : result.error, /502/);
  });

  it("reports an unreachable server", async () => {
    const down: typeof fetch = () => Promise.reject(new TypeError("Failed to fetch"));
    assert.deepEqual(await signIn("ada@lab.test", "pw", down), { ok: false, error: "could not reach the server (Failed to fetch)" });
  });
});

describe("where a sign-in lands, and what a join code opens", () => {
  it("a facilitator signing in to the home page lands on their workshops; everyone else where they were going", async () => {
    const { fetch } = server(200, JSON.stringify({ user: { id: "u1", role: "facilitator" } }));
    const result = await signIn("f@lab.test", "a long password", fetch);
    assert.deepEqual(result, { ok: true, role: "facilitator" });
    assert.equal(landingAfterSignIn("/", result.ok ? result.role : undefined), "/workshops");
    assert.equal(landingAfterSignIn("/notebooks/abc", "facilitator"), "/notebooks/abc");
    assert.equal(landingAfterSignIn("/", "member"), "/");
    assert.equal(landingAfterSignIn("/", undefined), "/");
  });

  it("a join code is looked up before a name is typed: the workshop's title, or the server's words for none", async () => {
    const found = server(200, JSON.stringify({ title: "GPU day", ended: false, rejoining: false }));
    assert.deepEqual(await workshopInfo(" K7Q2 ", found.fetch), { ok: true, info: { title: "GPU day", ended: false, rejoining: false } });
    assert.equal(found.sent[0]!.url, "/api/auth/workshop/join-info?code=K7Q2");
    const none = server(404, JSON.stringify({ message: "no open workshop has this code; check it with your facilitator" }));
    assert.deepEqual(await workshopInfo("NOPE", none.fetch), { ok: false, error: "no open workshop has this code; check it with your facilitator" });
  });
});

describe("joinWorkshop and signOut", () => {
  it("joins with the code and the trimmed name", async () => {
    const { fetch, sent } = server(200, '{"userId":"u1","rejoined":false}');
    assert.deepEqual(await joinWorkshop("ABC123", "  Pia ", fetch), { ok: true });
    assert.deepEqual(sent[0]?.body, { code: "ABC123", name: "Pia" });
    assert.equal(sent[0]?.url, "/api/auth/workshop/join");
  });

  it("passes on the server's words for an unknown code", async () => {
    const { fetch } = server(404, '{"message":"no open workshop has this code; check it with your facilitator"}');
    assert.deepEqual(await joinWorkshop("NOPE", "Pia", fetch), { ok: false, error: "no open workshop has this code; check it with your facilitator" });
  });

  it("signs out with an empty JSON body", async () => {
    const { fetch, sent } = server(200, '{"success":true}');
    assert.deepEqual(await signOut(fetch), { ok: true });
    assert.deepEqual(sent, [{ url: "/api/auth/sign-out", method: "POST", contentType: "application/json", body: {} }]);
  });
});

describe("changePassword", () => {
  it("POSTs both passwords as JSON, signing out the other sessions, and succeeds on 200", async () => {
    const { fetch, sent } = server(200, '{"token":"new","user":{}}');
    assert.deepEqual(await changePassword("old password", "a new long one", fetch), { ok: true });
    assert.deepEqual(sent, [
      {
        url: "/api/auth/change-password",
        method: "POST",
        contentType: "application/json",
        body: { currentPassword: "old password", newPassword: "a new long one", revokeOtherSessions: true },
      },
    ]);
  });

  it("shows the server's message on 400 and 401", async () => {
    const wrong = server(401, '{"message":"Invalid password","code":"INVALID_PASSWORD"}');
    assert.deepEqual(await changePassword("not it", "a new long one", wrong.fetch), { ok: false, error: "Invalid password" });
    const refused = server(400, '{"message":"Password too long","code":"PASSWORD_TOO_LONG"}');
    assert.deepEqual(await changePassword("old password", "x".repeat(200), refused.fetch), { ok: false, error: "Password too long" });
  });

  it("says how long to wait when rate-limited, as sign-in does", async () => {
    const { fetch } = server(429, "", { "X-Retry-After": "7" });
    assert.deepEqual(await changePassword("old password", "a new long one", fetch), { ok: false, error: "Too many attempts; try again in 7 s" });
  });

  it("refuses a new password under 10 characters without asking", async () => {
    const { fetch, sent } = server(200, "{}");
    assert.deepEqual(await changePassword("old password", "123456789", fetch), { ok: false, error: "a password has at least 10 characters" });
    assert.deepEqual(sent, []);
    assert.equal(passwordProblem("1234567890"), null);
  });
});
