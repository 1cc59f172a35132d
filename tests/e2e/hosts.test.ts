/**
 * The hosts page and the kernel spec control in Debian's chromium against
 * the real server: from the notebook list to /hosts, the local host's card,
 * "Check now" starting its agent and showing the interpreter's Python and
 * torch versions (as that interpreter reports them); and in a notebook's
 * header, the "Kernel: … · …" form refusing more GPUs than allowed, saving
 * a count that a reload still shows, while the header still fits 1024 px.
 * On a host that refuses when full: the refused kernel waits in the header
 * with who holds the GPU since when and a Retry that starts it once the GPU
 * is free, and /hosts names the holder.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { chooseInterpreter } from "../../server/kernel/python-interpreter";
import { launchBrowser } from "../helpers/browser";
import { LabServer } from "../helpers/lab-server";
import { connectClient, type TestClient } from "../helpers/socket-harness";

const LIMIT = { timeout: 120_000 };

describe("hosts in the browser", () => {
  const agentDir = mkdtempSync(path.join(tmpdir(), "mgpulab-hosts-e2e-"));
  let server: LabServer;
  let browser: Browser;

  before(async () => {
    // A short lease and a private runtime dir: the agent "Check now" starts goes away soon after the test.
    server = await LabServer.start({ MGPULAB_KERNEL_LEASE_SECONDS: "5", MGPULAB_AGENT_RUNTIME_DIR: agentDir });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(agentDir, { recursive: true, force: true });
  });

  // First: no host has been checked yet, so the local host's GPU count is unknown and any count up to 1024 may be asked for.
  it("changes a notebook's kernel spec from its header, which still fits 1024 px", LIMIT, async () => {
    const lab = await connectClient(server.url);
    const created = await lab.sendLab({ op: "create-notebook", title: "A notebook whose title is long enough to need the header's truncation" });
    lab.close();
    assert.ok(created.ok && created.notebook);
    const page = await browser.newPage({ viewport: { width: 1024, height: 700 } });
    await page.goto(`${server.url}/notebooks/${created.notebook.id}`);
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    const control = page.getByTestId("kernel-spec");
    await control.filter({ hasText: "Kernel: this machine · no GPU" }).waitFor();

    await control.click();
    const form = page.getByTestId("kernel-spec-form");
    await form.waitFor();
    await page.getByTestId("kernel-spec-host").locator('option[value="local"]').waitFor({ state: "attached" });
    assert.equal(await page.getByTestId("kernel-spec-later").count(), 0, "no kernel runs: nothing waits for a restart");
    await page.getByTestId("kernel-spec-gpus").fill("2000");
    await page.getByTestId("kernel-spec-apply").click();
    await page.getByTestId("kernel-spec-error").filter({ hasText: "a whole number of GPUs from 0 to" }).waitFor();

    await page.getByTestId("kernel-spec-gpus").fill("2");
    await page.getByTestId("kernel-spec-apply").click();
    await form.waitFor({ state: "detached" });
    await control.filter({ hasText: "Kernel: this machine · 2 GPUs" }).waitFor();

    // The control gives way first: with it, the header is no wider than without it (but for the gap before it).
    const header = page.locator(".notebook-header");
    const widths = await header.evaluate((element) => {
      const control = element.querySelector<HTMLElement>(".kernel-spec")!;
      const shown = element.scrollWidth;
      control.style.display = "none";
      const hidden = element.scrollWidth;
      control.style.display = "";
      return { shown, hidden, gap: parseFloat(getComputedStyle(element).columnGap) };
    });
    assert.ok(widths.shown <= Math.max(widths.hidden + widths.gap, 1024), JSON.stringify(widths));

    // With an ordinary title, everything fits 1024 px, the control included.
    const renamer = await connectClient(server.url);
    assert.deepEqual((await renamer.sendLab({ op: "rename-notebook", notebookId: created.notebook.id, title: "DDP hangs" })).ok, true);
    renamer.close();
    await page.reload();
    await page.locator('[data-testid="connection-status"][data-state="connected"]').waitFor();
    await page.getByTestId("kernel-spec").filter({ hasText: "Kernel: this machine · 2 GPUs" }).waitFor();
    const fits = await header.evaluate((element) => element.scrollWidth <= element.clientWidth);
    assert.ok(fits, "the header fits 1024 px");
    // Room is short by a few pixels here: the label may be cut, but stays readable and whole in its title.
    const shown = await page.getByTestId("kernel-spec").evaluate((element) => ({ width: element.clientWidth, title: element.getAttribute("title") }));
    assert.ok(shown.width >= 120, `the control keeps ${shown.width} px`);
    assert.match(shown.title ?? "", /^Kernel: this machine · 2 GPUs: /);
    await page.close();
  });

  it("shows the local host and, after Check now, its Python and torch versions", LIMIT, async () => {
    const python = chooseInterpreter().executable;
    const [pythonVersion, torchVersion] = execFileSync(python, ["-c", "import platform, torch; print(platform.python_version(), torch.__version__)"], { encoding: "utf8" }).trim().split(" ");
    assert.ok(pythonVersion && torchVersion);

    const page = await browser.newPage();
    await page.goto(server.url);
    await page.getByTestId("hosts-link").click();
    await page.waitForURL(/\/hosts$/);
    const card = page.locator('[data-testid="host-card"][data-host-id="local"]');
    await card.waitFor();
    assert.match(await card.locator(".host-name").innerText(), /this machine/);
    assert.match(await card.locator(".host-target").innerText(), /local · .* on this machine/);

    await card.getByTestId("host-check").click();
    await page.locator('[data-testid="host-card"][data-host-id="local"][data-link="connected"]').waitFor({ timeout: 60_000 });
    // torch is probed after the agent answers: the page's refresh brings it in.
    const software = card.getByTestId("host-software");
    await software.filter({ hasText: `torch ${torchVersion}` }).waitFor({ timeout: 60_000 });
    const text = await software.innerText();
    assert.ok(text.includes(`Python ${pythonVersion}`), text);
    assert.match(await card.getByTestId("host-agent").innerText(), /^agent pid \d+ · up .* · runs the lab's code$/);
    assert.equal(await card.getByTestId("host-error").count(), 0);
    await page.close();
  });
});

describe("a refused kernel in the browser", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-refused-e2e-"));
  const gpu = { index: 0, uuid: "GPU-e2e00000-0000-0000-0000-000000000000", name: "Declared", memoryTotalMiB: 1024 };
  let server: LabServer;
  let browser: Browser;

  before(async () => {
    const hostsFile = path.join(dir, "hosts.json");
    writeFileSync(hostsFile, JSON.stringify({ hosts: [{ id: "local", kind: "local", gpus: [gpu], whenFull: "refuse" }] }));
    server = await LabServer.start({ MGPULAB_HOSTS_FILE: hostsFile, MGPULAB_KERNEL_LEASE_SECONDS: "5", MGPULAB_AGENT_RUNTIME_DIR: path.join(dir, "agents") });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function notebookWithGpu(client: TestClient, title: string): Promise<{ notebookId: string; cellId: string }> {
    const created = await client.sendLab({ op: "create-notebook", title });
    assert.ok(created.ok && created.notebook);
    const opened = await client.send({ op: "open", notebookId: created.notebook.id });
    assert.ok(opened.ok && opened.notebook);
    assert.deepEqual(await client.send({ op: "set-kernel-spec", notebookId: created.notebook.id, hostId: "local", gpus: 1 }), { ok: true });
    return { notebookId: created.notebook.id, cellId: opened.notebook.cells[0]!.id };
  }

  it("shows who holds the GPU since when with a Retry, and Retry starts the kernel once the GPU is free", LIMIT, async () => {
    const holderClient = await connectClient(server.url);
    const waiterClient = await connectClient(server.url);
    try {
      const holder = await notebookWithGpu(holderClient, "DDP sweep");
      assert.ok((await holderClient.run(holder.notebookId, { [holder.cellId]: "print('holding')" })).ok);
      await holderClient.waitFor((event) => event.type === "cell-finished" && event.cellId === holder.cellId);
      const waiter = await notebookWithGpu(waiterClient, "waits for a GPU");
      assert.ok((await waiterClient.run(waiter.notebookId, { [waiter.cellId]: "print('ran')" })).ok);
      await waiterClient.waitFor((event) => event.type === "kernel-status" && event.status.state === "refused");

      const page = await browser.newPage();
      await page.goto(`${server.url}/notebooks/${waiter.notebookId}`);
      const badge = page.locator('[data-testid="kernel-status"][data-state="refused"]');
      await badge.waitFor();
      const refusal = await badge.getByTestId("kernel-refusal").innerText();
      assert.match(refusal, /^no GPU free on this machine: 1 asked, 0 free; held by Local user's 'DDP sweep' since \d\d:\d\d$/);
      await page.getByTestId("cell-status").filter({ hasText: "not run: the kernel did not start" }).waitFor();

      const hosts = await browser.newPage();
      await hosts.goto(`${server.url}/hosts`);
      const row = hosts.locator('[data-testid="host-card"][data-host-id="local"] [data-testid="host-gpu"]');
      await row.getByTestId("host-gpu-holder").filter({ hasText: "Local user's 'DDP sweep'" }).waitFor({ timeout: 60_000 });
      assert.match(await row.getByTestId("host-gpu-use").innerText(), /since \d\d:\d\d/);
      await hosts.close();

      assert.deepEqual(await holderClient.send({ op: "shutdown", notebookId: holder.notebookId }), { ok: true });
      await badge.getByTestId("kernel-restart").filter({ hasText: "Retry" }).click();
      await page.locator('[data-testid="kernel-status"][data-state="idle"]').waitFor({ timeout: 60_000 });
      assert.match(await page.getByTestId("kernel-gpus").innerText(), /GPU-e2e0/);
      await page.close();
      await waiterClient.send({ op: "shutdown", notebookId: waiter.notebookId });
    } finally {
      holderClient.close();
      waiterClient.close();
    }
  });
});
