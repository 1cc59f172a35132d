/**
 * hosts.json: defaults, the local host, and every problem naming the file and
 * the field — a bad host entry left out while the rest serves, a file that
 * cannot be used as a whole refused (its JSON errors with line and column).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { HostsConfigError, loadHostsConfig, parseHostsConfig } from "../../server/hosts/host-config";

const FILE = "hosts.json";
const ssh = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ hosts: [{ id: "gpu1", kind: "ssh", ssh: { host: "gpu1", ...fields }, ...extra }] });

/** The problems of `json`: the lines parseHostsConfig throws, else those of the entries it left out. */
function problems(json: unknown): string[] {
  try {
    const config = parseHostsConfig(json, FILE);
    const left = config.problems.flatMap((problem) => problem.errors);
    if (left.length === 0) assert.fail("the config was accepted whole");
    return left;
  } catch (error) {
    assert.ok(error instanceof HostsConfigError, String(error));
    return error.message.split("\n");
  }
}

describe("host config", () => {
  it("without a file: only this machine, with every default", () => {
    assert.deepEqual(parseHostsConfig({}, null), {
      file: null,
      hosts: [{ id: "local", label: "this machine", kind: "local", python: null, gpus: "auto", whenFull: "queue", leaseSeconds: 600, interruptGraceMs: 5000, runtimeDir: null, maxGpusPerKernel: null }],
      problems: [],
      defaultHost: "local",
      healthIntervalSeconds: 60,
      idle: { minutes: 60, gpuUtilizationPercent: 5, warnMinutes: 5 },
    });
  });

  it("an ssh host gets its defaults, ~ expanded, and the local host is added before it", () => {
    const config = parseHostsConfig(ssh({ identityFile: "~/.ssh/lab" }, { leaseMinutes: 1.5, interruptGraceSeconds: 2 }), FILE);
    assert.deepEqual(config.hosts.map((host) => host.id), ["local", "gpu1"]);
    const host = config.hosts[1];
    assert.ok(host?.kind === "ssh");
    assert.deepEqual(host.ssh, { host: "gpu1", user: null, port: null, identityFile: path.join(homedir(), ".ssh/lab"), jumpHost: null, options: {}, connectTimeoutSeconds: 10 });
    assert.equal(host.label, "gpu1 (ssh gpu1)");
    assert.equal(host.leaseSeconds, 90);
    assert.equal(host.interruptGraceMs, 2000);
  });

  it("a declared local host replaces the default one; a Slurm host gets its defaults", () => {
    const config = parseHostsConfig({ defaultHost: "cluster", hosts: [{ id: "cluster", kind: "slurm", slurm: {} }, { id: "local", kind: "local", label: "the lab", gpus: "none" }] }, FILE);
    assert.deepEqual(config.hosts.map((host) => `${host.id}:${host.label}`), ["cluster:cluster (Slurm)", "local:the lab"]);
    assert.equal(config.defaultHost, "cluster");
    const cluster = config.hosts[0];
    assert.ok(cluster?.kind === "slurm");
    assert.deepEqual(cluster.slurm, { sbatchArgs: [], gpusPerAgent: 1, login: null });
  });

  it("declared GPUs are kept as given", () => {
    const gpus = [{ index: 0, uuid: "MIG-1", name: "A100 1g.10gb", memoryTotalMiB: 9728 }];
    const host = parseHostsConfig(ssh({}, { gpus, maxGpusPerKernel: 1 }), FILE).hosts[1];
    assert.deepEqual(host?.gpus, gpus);
  });

  const refusals: Array<[string, unknown, string[]]> = [
    ["a port out of range", ssh({ port: 70000 }), ["hosts.json: hosts[0].ssh.port: expected an integer from 1 to 65535"]],
    ["a port as text", ssh({ port: "22" }), ["hosts.json: hosts[0].ssh.port: expected an integer from 1 to 65535"]],
    ["an unknown key in a host", ssh({}, { lease: 5 }), ["hosts.json: hosts[0].lease: unknown key (a typo?)"]],
    ["an unknown key in ssh", ssh({ identity: "~/.ssh/x" }), ["hosts.json: hosts[0].ssh.identity: unknown key (a typo?)"]],
    ["an unknown top-level key", { host: [] }, ["hosts.json: host: unknown key (a typo?)"]],
    ["an unknown kind", { hosts: [{ id: "x", kind: "k8s" }] }, ['hosts.json: hosts[0].kind: expected "local", "ssh" or "slurm"']],
    ["a bad id", { hosts: [{ id: "GPU_1", kind: "ssh", ssh: { host: "h" } }] }, ["hosts.json: hosts[0].id: expected 1 to 31 of a-z 0-9 -, starting with a letter or digit"]],
    ["a duplicate id", { hosts: [{ id: "a", kind: "ssh", ssh: { host: "h" } }, { id: "a", kind: "ssh", ssh: { host: "k" } }] }, ['hosts.json: hosts[1].id: duplicate id "a" (also hosts[0])']],
    ["the local id on another kind", { hosts: [{ id: "local", kind: "ssh", ssh: { host: "h" } }] }, ['hosts.json: hosts[0].id: the id "local" is for the one host of kind "local", and only for it']],
    ["a default host that is not there", { defaultHost: "nope" }, ["hosts.json: defaultHost: names no host (hosts: local)"]],
    ["a duplicate GPU uuid", ssh({}, { gpus: [{ index: 0, uuid: "G", name: "a", memoryTotalMiB: null }, { index: 1, uuid: "G", name: "b", memoryTotalMiB: null }] }), ["hosts.json: hosts[0].gpus[1].uuid: duplicate GPU uuid G"]],
    ["more GPUs per kernel than declared", ssh({}, { gpus: [{ index: 0, uuid: "G", name: "a", memoryTotalMiB: null }], maxGpusPerKernel: 2 }), ["hosts.json: hosts[0].maxGpusPerKernel: is more than the 1 GPUs declared"]],
    ["a relative runtime dir", ssh({}, { runtimeDir: "run" }), ["hosts.json: hosts[0].runtimeDir: expected an absolute path"]],
    ["whenFull misspelt", ssh({}, { whenFull: "wait" }), ['hosts.json: hosts[0].whenFull: expected "queue" or "refuse"']],
    ["a zero lease", ssh({}, { leaseMinutes: 0 }), ["hosts.json: hosts[0].leaseMinutes: expected a number of minutes above 0"]],
    ["too many GPUs per Slurm agent", { hosts: [{ id: "c", kind: "slurm", slurm: { gpusPerAgent: 65 } }] }, ["hosts.json: hosts[0].slurm.gpusPerAgent: expected an integer from 0 to 64"]],
  ];
  for (const [name, json, expected] of refusals) it(`refuses ${name}`, () => assert.deepEqual(problems(json), expected));

  it("leaves out a bad host entry, with its problems under its own id, and keeps every other host", () => {
    const config = parseHostsConfig(
      {
        defaultHost: "gpu1",
        hosts: [
          { id: "gpu1", kind: "ssh", ssh: { host: "gpu1" }, leaseMinuts: 5 },
          { id: "gpu2", kind: "ssh", ssh: { host: "gpu2" } },
          { kind: "ssh", ssh: { host: "gpu3" } },
          "gpu4",
          { id: "gpu2", kind: "ssh", ssh: { host: "gpu5" } },
        ],
      },
      FILE,
    );
    assert.deepEqual(config.hosts.map((host) => host.id), ["local", "gpu2"]);
    assert.deepEqual(config.problems, [
      { id: "gpu1", errors: ["hosts.json: hosts[0].leaseMinuts: unknown key (a typo?)"] },
      { id: "hosts[2]", errors: ["hosts.json: hosts[2].id: expected a string"] },
      { id: "hosts[3]", errors: ["hosts.json: hosts[3]: expected a host: an object with id and kind"] },
      { id: "hosts[4]", errors: ['hosts.json: hosts[4].id: duplicate id "gpu2" (also hosts[1])'] },
    ]);
    assert.equal(config.defaultHost, "gpu1", "a default host left out stays the default: its notebooks are told why");
  });

  it("a broken local entry leaves this machine serving with its defaults", () => {
    const config = parseHostsConfig({ hosts: [{ id: "local", kind: "local", lable: "x" }] }, FILE);
    assert.deepEqual(config.hosts.map((host) => `${host.id}:${host.label}`), ["local:this machine"]);
    assert.deepEqual(config.problems, [{ id: "hosts[0]", errors: ["hosts.json: hosts[0].lable: unknown key (a typo?)"] }]);
  });

  it("reports every problem at once, not just the first", () => {
    assert.deepEqual(problems({ hosts: [ssh({ port: 0 }).hosts[0], { id: "b", kind: "ssh", ssh: { host: "h", connectTimeoutSeconds: 0 }, colour: "red" }] }), [
      "hosts.json: hosts[0].ssh.port: expected an integer from 1 to 65535",
      "hosts.json: hosts[1].ssh.connectTimeoutSeconds: expected an integer from 1 to 300",
      "hosts.json: hosts[1].colour: unknown key (a typo?)",
    ]);
  });

  describe("refuses values that would act as options or end a command", () => {
    const injections: Array<[string, unknown, RegExp]> = [
      ["a host that is an ssh option", ssh({ host: "-oProxyCommand=sh" }), /hosts\[0\]\.ssh\.host: must not start with "-"/],
      ["a host with a space", ssh({ host: "gpu1 -v" }), /hosts\[0\]\.ssh\.host: expected a host name/],
      ["a user that is an option", ssh({ user: "-F/tmp/x" }), /hosts\[0\]\.ssh\.user: must not start with "-"/],
      ["a user with a newline", ssh({ user: "alice\nProxyCommand sh" }), /hosts\[0\]\.ssh\.user: must not contain control characters/],
      ["a jump host that is an option", ssh({ jumpHost: "-oProxyCommand=sh" }), /hosts\[0\]\.ssh\.jumpHost: must not start with "-"/],
      ["an option value with a newline", ssh({ options: { Compression: "yes\nProxyCommand sh" } }), /hosts\[0\]\.ssh\.options\.Compression: must not contain control characters/],
      ["an option name with a space", ssh({ options: { "Compression yes -o ProxyCommand": "sh" } }), /hosts\[0\]\.ssh\.options\.Compression yes -o ProxyCommand: expected an ssh option name/],
      ["BatchMode turned off", ssh({ options: { batchmode: "no" } }), /hosts\[0\]\.ssh\.options\.batchmode: batchmode is set by the lab/],
      ["an identity file with a newline", ssh({ identityFile: "/k\n-oProxyCommand=sh" }), /hosts\[0\]\.ssh\.identityFile: must not contain control characters/],
      ["a python that is an option", ssh({}, { python: "-c" }), /hosts\[0\]\.python: must not start with "-"/],
      ["a python with a single quote", ssh({}, { python: "python3' ; rm -rf ~ '" }), /hosts\[0\]\.python: must not contain a single quote/],
      ["an sbatch argument that is not an option", { hosts: [{ id: "c", kind: "slurm", slurm: { sbatchArgs: ["rm -rf ~"] } }] }, /hosts\[0\]\.slurm\.sbatchArgs\[0\]: expected an option/],
      ["an sbatch argument the lab sets", { hosts: [{ id: "c", kind: "slurm", slurm: { sbatchArgs: ["--wrap=sh"] } }] }, /hosts\[0\]\.slurm\.sbatchArgs\[0\]: is set by the lab/],
      ["an sbatch argument with a quote", { hosts: [{ id: "c", kind: "slurm", slurm: { sbatchArgs: ["--comment=it's"] } }] }, /hosts\[0\]\.slurm\.sbatchArgs\[0\]: must not contain a single quote/],
      ["a Slurm login host that is an option", { hosts: [{ id: "c", kind: "slurm", slurm: { login: { host: "-oProxyCommand=sh" } } }] }, /hosts\[0\]\.slurm\.login\.host: must not start with "-"/],
    ];
    for (const [name, json, expected] of injections) {
      it(name, () => assert.ok(problems(json).some((line) => expected.test(line)), problems(json).join("\n")));
    }
  });

  describe("loading", () => {
    const withDir = (run: (dir: string) => void) => {
      const dir = mkdtempSync(path.join(tmpdir(), "mgpulab-hosts-"));
      try {
        run(dir);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    it("no MGPULAB_HOSTS_FILE and no <dataDir>/hosts.json: the local host alone", () =>
      withDir((dir) => assert.deepEqual(loadHostsConfig({ dataDir: dir, env: {} }).hosts.map((host) => host.id), ["local"])));

    it("reads <dataDir>/hosts.json, and MGPULAB_HOSTS_FILE before it", () =>
      withDir((dir) => {
        writeFileSync(path.join(dir, "hosts.json"), JSON.stringify(ssh({})));
        const other = path.join(dir, "other.json");
        writeFileSync(other, JSON.stringify({ hosts: [{ id: "other", kind: "ssh", ssh: { host: "o" } }] }));
        const fromData = loadHostsConfig({ dataDir: dir, env: {} });
        assert.equal(fromData.file, path.join(dir, "hosts.json"));
        assert.deepEqual(fromData.hosts.map((host) => host.id), ["local", "gpu1"]);
        assert.deepEqual(loadHostsConfig({ dataDir: dir, env: { MGPULAB_HOSTS_FILE: other } }).hosts.map((host) => host.id), ["local", "other"]);
      }));

    it("the documented example, hosts.example.json, is a valid hosts file", () => {
      const config = loadHostsConfig({ file: path.join(__dirname, "..", "..", "hosts.example.json"), dataDir: tmpdir() });
      assert.deepEqual(config.hosts.map((host) => `${host.id}:${host.kind}`), ["local:local", "gpu1:ssh", "workshop:ssh", "cluster:slurm"]);
    });

    it("names the file when it is missing, not JSON (with line and column), or wrong", () =>
      withDir((dir) => {
        const missing = path.join(dir, "missing.json");
        assert.throws(() => loadHostsConfig({ dataDir: dir, env: { MGPULAB_HOSTS_FILE: missing } }), new RegExp(`^HostsConfigError: ${missing}: cannot read the hosts file \\(MGPULAB_HOSTS_FILE\\)`));
        const broken = path.join(dir, "broken.json");
        writeFileSync(broken, "{ hosts: [");
        assert.throws(() => loadHostsConfig({ file: broken, dataDir: dir }), { message: `${broken}: not valid JSON: line 1, column 3: expected a key in double quotes, found "h"` });
        writeFileSync(broken, '{\n  "hosts": [\n    { "id": "gpu1", "kind": "ssh", "ssh": { "host": "gpu1" } },\n  ]\n}\n');
        assert.throws(() => loadHostsConfig({ file: broken, dataDir: dir }), { message: `${broken}: not valid JSON: line 4, column 3: a comma before the closing bracket (JSON allows no trailing comma)` });
        writeFileSync(broken, '{ "hosts": [ { "id": "gpu1" "kind": "ssh" } ] }');
        assert.throws(() => loadHostsConfig({ file: broken, dataDir: dir }), { message: `${broken}: not valid JSON: line 1, column 29: expected "," or "}" after a value, found """` });
        const wrong = path.join(dir, "wrong.json");
        writeFileSync(wrong, JSON.stringify(ssh({ port: 0 })));
        assert.deepEqual(loadHostsConfig({ file: wrong, dataDir: dir }).problems, [{ id: "gpu1", errors: [`${wrong}: hosts[0].ssh.port: expected an integer from 1 to 65535`] }]);
        writeFileSync(wrong, JSON.stringify({ hosts: [], healthIntervalSeconds: 0 }));
        assert.throws(() => loadHostsConfig({ file: wrong, dataDir: dir }), { message: `${wrong}: healthIntervalSeconds: expected a number of seconds above 0` });
      }));
  });
});
