# Shared by start.sh and test.sh: make a fresh machine of this kind ready.
# Installs what is missing when it can (npm packages; Debian packages as root)
# and otherwise says exactly what is missing.

say() { printf '\033[1m[multi-gpu-lab]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[multi-gpu-lab]\033[0m %s\n' "$*" >&2; exit 1; }

missing_debian_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

ensure_debian_packages() {
  local missing
  missing=$(missing_debian_packages "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    say "installing Debian packages: $missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || die "apt-get update failed"
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null || die "apt-get install $missing failed"
  else
    die "missing Debian packages: $missing — install them (sudo apt-get install $missing) and run again"
  fi
}

ensure_node_modules() {
  command -v node >/dev/null || die "node is missing: install Node.js 20"
  local stamp=node_modules/.package-lock.json
  if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
    # `npm install`, not `npm ci`: npm 11 drops other platforms' optional
    # packages (@next/swc-*) from the lockfile and then refuses its own lockfile
    # in `npm ci`. `npm install` still installs the locked versions.
    say "installing npm packages (npm install)"
    npm install --no-audit --no-fund --loglevel=error || die "npm install failed"
  fi
  # npm 11 builds native modules only when package.json's allowScripts lists them.
  [ -f node_modules/node-pty/build/Release/pty.node ] || die "node-pty's native module did not build: check allowScripts in package.json and that make and g++ are installed"
  node -e "require('better-sqlite3')(':memory:').close()" 2>/dev/null || die "better-sqlite3's native module did not build: check allowScripts in package.json"
  # The Prisma client is generated here, offline, never committed.
  bash scripts/db-generate.sh >/dev/null || die "generating the Prisma client failed (bash scripts/db-generate.sh shows why)"
}

# The Next.js production build, redone only when a source it depends on changed.
ensure_next_build() {
  local stamp=.next/.mgpulab-build-stamp
  local current
  current=$(find app components server/core next.config.js package-lock.json tsconfig.json -type f -print0 2>/dev/null | sort -z | xargs -0 sha1sum | sha1sum | cut -d' ' -f1)
  if [ -f .next/BUILD_ID ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$current" ]; then
    return 0
  fi
  say "building the web app (next build)"
  NEXT_TELEMETRY_DISABLED=1 npx next build >/tmp/mgpulab-next-build.log 2>&1 || { tail -40 /tmp/mgpulab-next-build.log; die "next build failed (full log: /tmp/mgpulab-next-build.log)"; }
  echo "$current" >"$stamp"
}
