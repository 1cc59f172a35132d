#!/usr/bin/env bash
# Generates the Prisma client into server/persistence/generated/ (gitignored),
# offline: `prisma generate` does not run the schema engine, but the CLI looks
# for its native binary first and would try to download it; naming any
# existing file in PRISMA_SCHEMA_ENGINE_BINARY satisfies that check. The file
# used here is a stub that fails loudly if the CLI ever does try to run it.
# Skips the work when schema.prisma and the installed prisma are unchanged.
#   bash scripts/db-generate.sh          generate when stale
#   bash scripts/db-generate.sh --force  always generate
set -euo pipefail
cd "$(dirname "$0")/.."

out=server/persistence/generated
stamp=$out/.schema-stamp
[ -f node_modules/prisma/package.json ] || { echo "db-generate: node_modules/prisma is missing: run npm ci first" >&2; exit 1; }
current=$(cat prisma/schema.prisma node_modules/prisma/package.json node_modules/@prisma/client/package.json | sha1sum | cut -d' ' -f1)
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$current" ] && [ -f "$out/client.ts" ]; then
  exit 0
fi

stub_dir=node_modules/.cache/mgpulab
stub=$stub_dir/no-schema-engine
mkdir -p "$stub_dir"
if [ ! -x "$stub" ]; then
  printf '#!/bin/sh\necho "the native Prisma schema engine is not installed here: use scripts/db-migrate-diff.ts (WebAssembly engine)" >&2\nexit 1\n' >"$stub"
  chmod +x "$stub"
fi

log=$(mktemp)
if ! PRISMA_SCHEMA_ENGINE_BINARY="$PWD/$stub" CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1 \
  node node_modules/prisma/build/index.js generate --schema prisma/schema.prisma >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "db-generate: prisma generate failed" >&2
  exit 1
fi
rm -f "$log"
echo "$current" >"$stamp"
echo "db-generate: Prisma client generated in $out"
