/**
 * Debian packages a test file needs (openssh-server, Slurm), installed once by
 * the suite itself, as scripts/lib.sh does for the others: as root with apt-get
 * when missing, otherwise a reason to skip that names what to install.
 */
import { spawnSync } from "node:child_process";

function installed(pkg: string): boolean {
  const result = spawnSync("dpkg-query", ["-W", "-f=${Status}", pkg], { encoding: "utf8" });
  return result.status === 0 && result.stdout.includes("install ok installed");
}

/** null when every package is there (installing what was missing); else why the tests cannot run. */
export function ensureDebianPackages(packages: string[]): string | null {
  const missing = packages.filter((pkg) => !installed(pkg));
  if (missing.length === 0) return null;
  const canInstall = process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0;
  if (!canInstall) return `missing Debian packages: ${missing.join(" ")} (as root: apt-get install --no-install-recommends ${missing.join(" ")})`;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const lock = ["-o", "DPkg::Lock::Timeout=300"];
  const update = spawnSync("apt-get", ["update", "-qq", ...lock], { encoding: "utf8", env });
  if (update.status !== 0) throw new Error(`apt-get update failed: ${update.stderr}`);
  const install = spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...lock, ...missing], { encoding: "utf8", env });
  if (install.status !== 0) throw new Error(`apt-get install ${missing.join(" ")} failed: ${install.stderr}`);
  return null;
}
