/** The argv each kind of host runs (exact), and the quoting rule for what reaches a remote shell. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHostsConfig, type HostConfig } from "../../server/hosts/host-config";
import { shellQuote, transportFor } from "../../server/hosts/host-transport";
import { execStub, slurmScripts } from "../../server/hosts/slurm-scripts";

const BOOT = 'import sys\nprint("hi")';
const SCRIPTS = { keeper: "KEEPER", connector: "CONNECTOR" };

function host(json: Record<string, unknown>): HostConfig {
  const config = parseHostsConfig({ hosts: [{ id: "h", ...json }] }, "test");
  const found = config.hosts.find((candidate) => candidate.id === "h");
  assert.ok(found);
  return found;
}

describe("host transports", () => {
  it("local: the interpreter itself, on pipes (no PTY); remote hosts keep their PTY", () => {
    const transport = transportFor(parseHostsConfig({}, null).hosts[0]!, "/usr/bin/python3");
    assert.deepEqual(transport.launchArgv(BOOT), ["/usr/bin/python3", "-u", "-c", BOOT]);
    assert.equal(transport.kind, "local");
    assert.equal(transport.channel, "pipes");
    assert.notEqual(transportFor(host({ kind: "ssh", ssh: { host: "gpu1" } })).channel, "pipes");
  });

  it("ssh with only a host: BatchMode, timeout, keepalives, the alias, one remote command", () => {
    const transport = transportFor(host({ kind: "ssh", ssh: { host: "gpu1" } }));
    assert.deepEqual(transport.launchArgv(BOOT), [
      "ssh", "-tt", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
      "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
      "--", "gpu1", `python3 -u -c '${BOOT}'`,
    ]);
    assert.equal(transport.describe(), "gpu1 (ssh)");
  });

  it("ssh with everything set", () => {
    const transport = transportFor(
      host({
        kind: "ssh",
        python: "/opt/conda/bin/python",
        ssh: { host: "gpu1.example.com", user: "alice", port: 2222, identityFile: "/keys/lab", jumpHost: "bob@bastion:22", options: { StrictHostKeyChecking: "yes", ServerAliveInterval: "5" }, connectTimeoutSeconds: 4 },
      }),
    );
    assert.deepEqual(transport.launchArgv(BOOT), [
      "ssh", "-tt", "-o", "BatchMode=yes", "-o", "ConnectTimeout=4",
      "-o", "StrictHostKeyChecking=yes", "-o", "ServerAliveInterval=5",
      "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3",
      "-J", "bob@bastion:22", "-i", "/keys/lab", "-o", "IdentitiesOnly=yes", "-p", "2222", "-l", "alice",
      "--", "gpu1.example.com", `/opt/conda/bin/python -u -c '${BOOT}'`,
    ]);
    assert.equal(transport.describe(), "alice@gpu1.example.com:2222 via bob@bastion:22 (ssh)");
  });

  it("a remote interpreter path with a space is quoted", () => {
    const argv = transportFor(host({ kind: "ssh", python: "/opt/my env/python3", ssh: { host: "gpu1" } })).launchArgv(BOOT);
    assert.equal(argv.at(-1), `'/opt/my env/python3' -u -c '${BOOT}'`);
  });

  it("a bootstrap with a single quote is refused, never mis-quoted", () => {
    for (const json of [{ kind: "ssh", ssh: { host: "gpu1" } }, { kind: "slurm", slurm: {} }]) {
      assert.throws(() => transportFor(host(json), undefined, { slurmScripts: SCRIPTS }).launchArgv("print('x')"), /must not contain a single quote/);
    }
  });

  it("slurm, local: a launch script with its values as separate arguments", () => {
    const transport = transportFor(host({ kind: "slurm", runtimeDir: "/scratch/lab", slurm: { gpusPerAgent: 2, sbatchArgs: ["--partition=gpu", "--time=60"] } }), undefined, { slurmScripts: SCRIPTS, keeperIdleSeconds: 30 });
    const argv = transport.launchArgv(BOOT);
    assert.deepEqual([argv[0], argv[1], ...argv.slice(3)], ["sh", "-c", "mgpulab-slurm", "mgpulab-h", "python3", "KEEPER", "CONNECTOR", "/scratch/lab", "30", BOOT, "2", "--partition=gpu", "--time=60"]);
    assert.match(argv[2] ?? "", /sbatch --parsable --job-name="\$name"/);
    assert.match(argv[2] ?? "", /exec srun --jobid="\$job" --overlap --nodes=1 --ntasks=1 --pty "\$python" -u -c "\$connector" "\$dir" 60 "\$python" -u -c "\$bootstrap"/);
    assert.equal(transport.describe(), "Slurm job mgpulab-h --gres=gpu:2 (slurm)");
  });

  it("slurm through a login node: the same script, every word quoted for the login shell", () => {
    const transport = transportFor(host({ kind: "slurm", slurm: { gpusPerAgent: 0, login: { host: "login1", user: "alice" } } }), undefined, { slurmScripts: SCRIPTS, keeperIdleSeconds: 30 });
    const argv = transport.launchArgv(BOOT);
    assert.deepEqual(argv.slice(0, -1), ["ssh", "-tt", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "-l", "alice", "--", "login1"]);
    const local = transportFor(host({ kind: "slurm", slurm: { gpusPerAgent: 0 } }), undefined, { slurmScripts: SCRIPTS, keeperIdleSeconds: 30 }).launchArgv(BOOT);
    assert.equal(argv.at(-1), `sh -c ${shellQuote(local[2] ?? "")} mgpulab-slurm mgpulab-h python3 KEEPER CONNECTOR '' 30 '${BOOT}' 0`);
    assert.equal(transport.describe(), "Slurm job mgpulab-h via alice@login1 (slurm)");
  });

  it("shellQuote leaves plain words and single-quotes the rest, quotes included", () => {
    assert.equal(shellQuote("/usr/bin/python3"), "/usr/bin/python3");
    assert.equal(shellQuote(""), "''");
    assert.equal(shellQuote("a b"), "'a b'");
    assert.equal(shellQuote("it's $HOME"), `'it'\\''s $HOME'`);
  });

  it("the keeper and connector travel as base64 behind a stub with no quote a shell would read", () => {
    const scripts = slurmScripts();
    for (const stub of [scripts.keeper, scripts.connector]) {
      assert.match(stub, /^import base64;exec\(compile\(base64\.b64decode\("[A-Za-z0-9+/=]+"\),"mgpulab","exec"\)\)$/);
      assert.doesNotMatch(stub, /'/);
    }
    assert.equal(execStub("x = 1"), 'import base64;exec(compile(base64.b64decode("eCA9IDE="),"mgpulab","exec"))');
  });
});
