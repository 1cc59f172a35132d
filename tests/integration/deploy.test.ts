/**
 * The server install (deploy/): the systemd unit passes `systemd-analyze
 * verify` (no running systemd needed) with not one warning; its command
 * line, run as the unit would run it with the example settings file, starts
 * the lab, which answers /metrics on this machine and stops cleanly on the
 * unit's stop signal; the settings file names every setting an operator
 * must set, each one the server really reads; and the nginx site with its
 * TLS lines, in front of that lab, serves it over verified TLS — HTTP
 * redirected, HSTS, sign-in and the WebSocket through it, /metrics only
 * with the token (a forwarded request is never "this machine").
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect as connectTcp } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { connect } from "socket.io-client";
import { nginxConf } from "../../scripts/nginx-conf";
import { ensureDebianPackages } from "../helpers/debian-packages";
import { exited, freePort, pollUntilAsync } from "../helpers/daemons";

const LIMIT = { timeout: 180_000 };
const ROOT = path.resolve(__dirname, "..", "..");
const UNIT = path.join(ROOT, "deploy", "mgpulab.service");
const SETTINGS = path.join(ROOT, "deploy", "mgpulab.env");
const PUBLIC_NAME = "lab.example.com";
/** What the issue asks an operator be told to set: public origin, admin, database, Redis, hosts file, metrics token. */
const OPERATOR_SETTINGS = ["MGPULAB_ALLOWED_ORIGINS", "MGPULAB_ADMIN_EMAIL", "MGPULAB_ADMIN_PASSWORD", "MGPULAB_DATABASE_URL", "MGPULAB_REDIS_URL", "MGPULAB_HOSTS_FILE", "MGPULAB_METRICS_TOKEN"];

const unavailable = ensureDebianPackages(["systemd", "nginx-light", "openssl"]);

/** A unit file's [Service] settings, by key, each value in order. */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) section = header[1]!;
    else if (section === "Service") {
      const at = line.indexOf("=");
      settings.set(line.slice(0, at), [...(settings.get(line.slice(0, at)) ?? []), line.slice(at + 1)]);
    }
  }
  return settings;
}

/** An EnvironmentFile's assignments (systemd's reading: KEY=value, surrounding double quotes removed). */
function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(raw.trim());
    if (match) env[match[1]!] = match[2]!.replace(/^"(.*)"$/, "$1");
  }
  return env;
}

/** Every .ts file under server/ as one text: where a setting the server reads is named. */
function serverSources(): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (entry === "generated" || entry === "generated-pg") continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith(".ts")) out.push(readFileSync(full, "utf8"));
    }
  };
  walk(path.join(ROOT, "server"));
  return out.join("\n");
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function answerOf(req: ReturnType<typeof httpRequest>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    req.once("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.once("error", reject);
    req.end(body);
  });
}

describe("the server install: systemd unit, settings, nginx with TLS", { skip: unavailable ?? false }, () => {
  const unitText = readFileSync(UNIT, "utf8");
  const settingsText = readFileSync(SETTINGS, "utf8");
  const unit = serviceSettings(unitText);
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-deploy-"));
  let lab: ChildProcess | null = null;
  let labPort = 0;
  let labLog = "";

  after(async () => {
    if (lab && lab.exitCode === null && lab.signalCode === null) {
      lab.kill("SIGKILL");
      await exited(lab);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("the unit passes systemd-analyze verify without a warning", LIMIT, () => {
    const verify = spawnSync("systemd-analyze", ["verify", "--man=no", UNIT], { encoding: "utf8" });
    assert.equal(verify.error, undefined, `systemd-analyze: ${verify.error?.message}`);
    assert.equal(verify.status, 0, verify.stderr);
    assert.equal(`${verify.stdout}${verify.stderr}`.trim(), "", "no warning either (an unknown key or a bad value is only a warning)");
    // The check has teeth: the same unit with a misspelt value is reported.
    const broken = path.join(dir, "mgpulab.service");
    writeFileSync(broken, unitText.replace("KillMode=process", "KillMode=procss"));
    assert.match(spawnSync("systemd-analyze", ["verify", "--man=no", broken], { encoding: "utf8" }).stderr, /kill mode/i);
  });

  it("the settings file names every setting an operator must set, each one the server reads, and the README explains them", LIMIT, () => {
    const sources = serverSources();
    const readme = readFileSync(path.join(ROOT, "deploy", "README.md"), "utf8");
    for (const setting of OPERATOR_SETTINGS) {
      assert.match(settingsText, new RegExp(`^#?${setting}=`, "m"), `${setting} is in deploy/mgpulab.env`);
      assert.ok(readme.includes(setting), `${setting} is explained in deploy/README.md`);
    }
    const named = new Set([...`${settingsText}\n${unitText}`.matchAll(/^#?(?:Environment=)?((?:MGPULAB_|HOST|PORT)[A-Z0-9_]*)=/gm)].map((match) => match[1]!));
    for (const setting of named) assert.ok(sources.includes(setting), `${setting} (deploy/) is read by the server`);
    assert.deepEqual(unit.get("EnvironmentFile"), ["/etc/mgpulab/mgpulab.env"]);
  });

  it("its command, run as the unit runs it with the example settings, starts the lab, which answers /metrics on this machine", LIMIT, async () => {
    const [command, ...args] = unit.get("ExecStart")![0]!.split(/\s+/);
    assert.ok(command);
    const fromUnit = Object.fromEntries(unit.get("Environment")!.map((assignment) => assignment.split(/=(.*)/s).slice(0, 2) as [string, string]));
    labPort = await freePort();
    const dataDir = path.join(dir, "data");
    assert.equal(fromUnit.NODE_ENV, "production");
    // systemd starts the command with the unit's environment and the settings file's, not the caller's.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...fromUnit,
      NODE_ENV: "production",
      ...environmentFile(settingsText),
      // Where this test may write, instead of /var/lib and /run (the unit's defaults).
      PORT: String(labPort),
      MGPULAB_DATA_DIR: dataDir,
      MGPULAB_AGENT_RUNTIME_DIR: path.join(dir, "run"),
    };
    // WorkingDirectory is the checkout (/opt/mgpulab in the unit).
    lab = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const child = lab;
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stderr! }).on("line", (line) => (labLog += `${line}\n`));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        labLog += `${line}\n`;
        if (line.includes('"listening"')) resolve();
      });
      child.once("exit", (code) => reject(new Error(`the unit's command exited with ${code}:\n${labLog}`)));
    });
    assert.match(labLog, /"first admin created"/, "MGPULAB_ADMIN_EMAIL/_PASSWORD made the first admin");
    const metrics = await answerOf(httpRequest({ host: "127.0.0.1", port: labPort, path: "/metrics" }));
    assert.equal(metrics.status, 200, metrics.body);
    assert.match(metrics.body, /^mgpulab_sockets_connected /m);
  });

  describe("behind nginx with the TLS site", () => {
    let nginx: ChildProcess | null = null;
    let httpsPort: number;
    let httpPort: number;
    let certificate: string;
    const token = environmentFile(readFileSync(SETTINGS, "utf8")).MGPULAB_METRICS_TOKEN!;

    before(async () => {
      assert.ok(labPort > 0, "the lab of the previous test runs");
      const certificateFile = path.join(dir, "fullchain.pem");
      const keyFile = path.join(dir, "privkey.pem");
      const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${PUBLIC_NAME}`, "-addext", `subjectAltName=DNS:${PUBLIC_NAME}`, "-keyout", keyFile, "-out", certificateFile], { encoding: "utf8" });
      assert.equal(made.status, 0, made.stderr);
      certificate = readFileSync(certificateFile, "utf8");
      [httpsPort, httpPort] = [await freePort(), await freePort()];
      const prefix = path.join(dir, "nginx");
      mkdirSync(path.join(prefix, "temp"), { recursive: true });
      const conf = nginxConf(httpsPort, [labPort], prefix, { listen: `127.0.0.1:${httpsPort}`, serverName: PUBLIC_NAME, tls: { certificate: certificateFile, key: keyFile, redirectFrom: `127.0.0.1:${httpPort}` } });
      writeFileSync(path.join(prefix, "nginx.conf"), conf);
      const test = spawnSync("nginx", ["-t", "-p", prefix, "-c", path.join(prefix, "nginx.conf"), "-e", "stderr"], { encoding: "utf8" });
      assert.equal(test.status, 0, `nginx -t: ${test.stderr}`);
      nginx = spawn("nginx", ["-p", prefix, "-c", path.join(prefix, "nginx.conf"), "-e", "stderr", "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
      // nginx says nothing when it starts well: its port answering is the sign.
      await pollUntilAsync("nginx to listen", () => accepts(httpsPort), 15_000, 100);
    });
    after(async () => {
      if (nginx) {
        nginx.kill("SIGTERM");
        await exited(nginx);
      }
    });

    const tls = (pathname: string, headers: Record<string, string> = {}, method = "GET") =>
      httpsRequest({ host: "127.0.0.1", port: httpsPort, path: pathname, method, servername: PUBLIC_NAME, ca: certificate, headers: { Host: PUBLIC_NAME, ...headers } });

    it("serves the lab over verified TLS, with HSTS, and redirects plain HTTP", LIMIT, async () => {
      const page = await answerOf(tls("/"));
      assert.equal(page.status, 302, "no session: to sign-in");
      assert.match(String(page.headers.location), /^\/login/);
      assert.match(String(page.headers["strict-transport-security"]), /max-age=\d+/);
      assert.equal((await answerOf(tls("/login"))).status, 200);
      const plain = await answerOf(httpRequest({ host: "127.0.0.1", port: httpPort, path: "/login", headers: { Host: PUBLIC_NAME } }));
      assert.equal(plain.status, 301);
      assert.equal(plain.headers.location, `https://${PUBLIC_NAME}/login`);
    });

    it("signs in and opens the lab's WebSocket through it, with a Secure cookie", LIMIT, async () => {
      const email = environmentFile(settingsText).MGPULAB_ADMIN_EMAIL!;
      const password = environmentFile(settingsText).MGPULAB_ADMIN_PASSWORD!;
      const body = JSON.stringify({ email, password });
      const signedIn = await answerOf(tls("/api/auth/sign-in/email", { "Content-Type": "application/json", Origin: `https://${PUBLIC_NAME}` }, "POST"), body);
      assert.equal(signedIn.status, 200, signedIn.body);
      const cookie = (signedIn.headers["set-cookie"] ?? []).find((line) => /session_token=/.test(line));
      assert.ok(cookie, "a session cookie");
      assert.match(cookie, /; Secure/i);
      const socket = connect(`https://127.0.0.1:${httpsPort}`, {
        transports: ["websocket"],
        forceNew: true,
        reconnection: false,
        ca: certificate,
        rejectUnauthorized: false,
        extraHeaders: { cookie: cookie.split(";")[0]!, Origin: `https://${PUBLIC_NAME}`, Host: PUBLIC_NAME },
      });
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once("connect", () => resolve());
          socket.once("connect_error", reject);
        });
        const whoami = (await socket.timeout(20_000).emitWithAck("lab:command", { op: "whoami" })) as { ok: boolean; user?: { email: string } };
        assert.ok(whoami.ok, JSON.stringify(whoami));
      } finally {
        socket.disconnect();
      }
    });

    it("answers /metrics through it only with the token: a forwarded request is never this machine's", LIMIT, async () => {
      const none = await answerOf(tls("/metrics"));
      assert.equal(none.status, 401, none.body);
      assert.doesNotMatch(none.body, /mgpulab_/);
      const scraped = await answerOf(tls("/metrics", { Authorization: `Bearer ${token}` }));
      assert.equal(scraped.status, 200, scraped.body);
      assert.match(scraped.body, /^mgpulab_kernels\{/m);
    });
  });

  it("stops on the unit's KillSignal within its TimeoutStopSec, cleanly", LIMIT, async () => {
    assert.ok(lab, "the lab runs");
    const signal = unit.get("KillSignal")![0] as NodeJS.Signals;
    const limitSeconds = Number(unit.get("TimeoutStopSec")![0]);
    const began = Date.now();
    const exit = new Promise<number | null>((resolve) => lab!.once("exit", (code) => resolve(code)));
    lab!.kill(signal);
    assert.equal(await exit, 0, labLog.slice(-2000));
    assert.ok(Date.now() - began < limitSeconds * 1000, "within TimeoutStopSec");
  });
});
