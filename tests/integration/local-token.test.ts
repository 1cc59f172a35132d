/**
 * The local default, Jupyter's convention, against the real server process:
 * on loopback without accounts, `npm start` prints a URL with a one-time
 * token; opening it signs the browser in (an httpOnly, SameSite cookie);
 * without it nothing of the lab is served but a page saying where the URL
 * is. A lab on any other address refuses to start until an admin exists.
 * And no secret reaches the client bundle.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { AUTH_SECRET_FILE } from "../../server/auth/auth-secret";
import { LabServer } from "../helpers/lab-server";
import { labFetch, signIn, signInWithToken } from "../helpers/lab-session";
import { connectClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };
const ROOT = path.resolve(__dirname, "..", "..");
const run = promisify(execFile);

describe("the local token URL", () => {
  let server: LabServer;
  let dataDir: string;

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), "mgpulab-token-"));
    server = await LabServer.start({ MGPULAB_DATA_DIR: dataDir }, 60_000, { signIn: false });
  });
  after(async () => server?.stop());

  it("without the token, serves nothing but where to find the URL", LIMIT, async () => {
    assert.ok(server.signInUrl, "the lab printed a sign-in URL");
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 401);
    const html = await page.text();
    assert.match(html, /data-testid="sign-in-help"/);
    assert.match(html, /npm start/);
    // The URL it shows is this lab's, on the port it runs on (a random one here), not a fixed 3000.
    assert.ok(html.includes(`${server.url}/api/auth/local-token?token=`), html);
    assert.doesNotMatch(html, /<script/i, "no script: nothing of the app");
    // Not a page, an asset, nor the API.
    for (const path of ["/notebooks/x", "/hosts", "/login", "/_next/static/chunks/main.js", "/monaco/vs/loader.js"]) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 401, path);
      assert.match(await response.text(), /sign-in-help/, path);
    }
    const api = await fetch(`${server.url}/api/executions`);
    assert.equal(api.status, 401);
    assert.equal(((await api.json()) as { code: string }).code, "unauthorized");
    await assert.rejects(connectClient(server.url, ""), /unauthorized/);
  });

  it("opening it once signs in with an httpOnly SameSite cookie; a second time it is spent", LIMIT, async () => {
    const first = await fetch(server.signInUrl!, { redirect: "manual" });
    assert.equal(first.status, 302);
    assert.equal(first.headers.get("location"), "/");
    const setCookie = first.headers.getSetCookie().find((line) => line.startsWith("mgpulab.session_token="));
    assert.ok(setCookie, "a session cookie");
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Lax/i);
    const cookie = setCookie.split(";")[0]!;
    const page = await labFetch(`${server.url}/`, {}, cookie);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script/);
    const client = await connectClient(server.url, cookie);
    const me = await client.sendLab({ op: "whoami" });
    assert.ok(me.ok && me.me);
    assert.equal(me.me.role, "admin");
    client.close();

    const again = await fetch(server.signInUrl!, { redirect: "manual" });
    assert.equal(again.status, 302);
    assert.equal(again.headers.get("location"), "/?link=spent");
    assert.equal(again.headers.getSetCookie().length, 0, "no session from a spent token");
    assert.match(await (await fetch(`${server.url}/?link=spent`)).text(), /used already or has expired/);
  });

  it("`npm run lab -- login-url` prints a fresh one for the running lab", LIMIT, async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/lab-cli.ts", "login-url", "--url", server.url], { cwd: ROOT, env: { ...process.env, MGPULAB_DATA_DIR: dataDir } });
    const url = stdout.trim();
    assert.ok(url.startsWith(`${server.url}/api/auth/local-token?token=`), url);
    const cookie = await signInWithToken(url);
    assert.equal((await labFetch(`${server.url}/api/executions`, {}, cookie)).status, 200);
  });

  it("bad token URLs never lock the operator out of a fresh one (no guess limit on 192 random bits)", LIMIT, async () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const bad = await fetch(`${server.url}/api/auth/local-token?token=${"x".repeat(32)}${attempt}`, { redirect: "manual" });
      assert.equal(bad.status, 302, `attempt ${attempt}: answered, not rate-limited`);
      assert.equal(bad.headers.getSetCookie().length, 0, "no session from a wrong token");
    }
    const { stdout } = await run(process.execPath, ["--import", "tsx", "scripts/lab-cli.ts", "login-url", "--url", server.url], { cwd: ROOT, env: { ...process.env, MGPULAB_DATA_DIR: dataDir } });
    const cookie = await signInWithToken(stdout.trim());
    assert.equal((await labFetch(`${server.url}/api/executions`, {}, cookie)).status, 200);
  });

  it("no secret reaches the client bundle", LIMIT, async () => {
    const secret = readFileSync(path.join(dataDir, AUTH_SECRET_FILE), "utf8").trim();
    const token = new URL(server.signInUrl!).searchParams.get("token")!;
    const needles = [secret, token, "MGPULAB_AUTH_SECRET", "BETTER_AUTH_SECRET", "MGPULAB_ADMIN_PASSWORD", "$argon2id$", "@node-rs/argon2", "prismaAdapter", "auth-secret"];
    const files = walk(path.join(ROOT, ".next", "static"));
    assert.ok(files.length > 10, "the built client bundle is there");
    let bytes = 0;
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      bytes += text.length;
      for (const needle of needles) assert.ok(!text.includes(needle), `${path.relative(ROOT, file)} holds ${needle === secret ? "the cookie secret" : needle === token ? "a sign-in token" : needle}`);
    }
    console.log(`client bundle: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB scanned for ${needles.length} secrets and server-only names`);
  });
});

describe("a lab on another address", () => {
  it("refuses to start without an admin, and says how to make one", LIMIT, async () => {
    await assert.rejects(LabServer.start({ HOST: "0.0.0.0" }, 60_000, { signIn: false }), /has no admin yet[\s\S]*create-admin/);
  });

  it("starts with the first admin from the environment: sign-in page, no token URL", LIMIT, async () => {
    const server = await LabServer.start({ HOST: "0.0.0.0", MGPULAB_ADMIN_EMAIL: "ada@example.com", MGPULAB_ADMIN_PASSWORD: "correct horse battery" }, 60_000, { signIn: false });
    try {
      assert.equal(server.signInUrl, null, "no token URL off loopback");
      const url = server.url.replace("0.0.0.0", "127.0.0.1");
      const page = await fetch(`${url}/notebooks/x`, { redirect: "manual" });
      assert.equal(page.status, 302);
      assert.equal(page.headers.get("location"), "/login?next=%2Fnotebooks%2Fx");
      assert.equal((await fetch(`${url}/login`)).status, 200);
      assert.equal((await fetch(`${url}/api/auth/local-token?token=${"a".repeat(32)}`, { redirect: "manual" })).status, 404);
      const cookie = await signIn(url, "ada@example.com", "correct horse battery");
      const client = await connectClient(url, cookie);
      const me = await client.sendLab({ op: "whoami" });
      assert.ok(me.ok && me.me?.role === "admin");
      client.close();
    } finally {
      await server.stop();
    }
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : /\.(js|css|json|html|map)$/.test(name) ? [full] : [];
  });
}
