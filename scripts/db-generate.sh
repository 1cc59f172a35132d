#!/usr/bin/env bash
# Generates the Prisma clients, offline: SQLite's into
# server/persistence/generated/ and PostgreSQL's into generated-pg/ (both
# gitignored). PostgreSQL's schema, prisma/postgres/schema.prisma, is first
# derived from prisma/schema.prisma (scripts/db-postgres-schema.ts).
# `prisma generate` does not run the schema engine, but the CLI looks for its
# native binary first and would try to download it; naming any existing file
# in PRISMA_SCHEMA_ENGINE_BINARY satisfies that check. The file used here is a
# stub that fails loudly if the CLI ever does try to run it.
# Skips a client when its schema and the installed prisma are unchanged.
#   bash scripts/db-generate.sh          generate when stale
#   bash scripts/db-generate.sh --force  always generate
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f node_modules/prisma/package.json ] || { echo "db-generate: node_modules/prisma is missing: run npm ci first" >&2; exit 1; }

stub_dir=node_modules/.cache/mgpulab
stub=$stub_dir/no-schema-engine
mkdir -p "$stub_dir"
if [ ! -x "$stub" ]; then
  printf '#!/bin/sh\necho "the native Prisma schema engine is not installed here: use scripts/db-migrate-diff.ts (WebAssembly engine)" >&2\nexit 1\n' >"$stub"
  chmod +x "$stub"
fi

# PostgreSQL's schema is derived from schema.prisma (scripts/db-postgres-schema.ts). tsx runs only when
# schema.prisma, the derivation or the derived file changed since the last run (stamped after it).
derived_inputs() { cat prisma/schema.prisma server/persistence/postgres-schema.ts prisma/postgres/schema.prisma 2>/dev/null | sha1sum | cut -d' ' -f1; }
derived_stamp=$stub_dir/derived-stamp
if [ "${1:-}" = "--force" ] || [ "$(cat "$derived_stamp" 2>/dev/null)" != "$(derived_inputs)" ]; then
  node --import tsx scripts/db-postgres-schema.ts
  derived_inputs >"$derived_stamp"
fi

generate() { # generate SCHEMA OUT
  local schema=$1 out=$2 stamp=$2/.schema-stamp current log
  current=$(cat "$schema" node_modules/prisma/package.json node_modules/@prisma/client/package.json | sha1sum | cut -d' ' -f1)
  if [ "${FORCE:-}" != 1 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$current" ] && [ -f "$out/client.ts" ]; then
    return 0
  fi
  log=$(mktemp)
  if ! PRISMA_SCHEMA_ENGINE_BINARY="$PWD/$stub" CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1 \
    node node_modules/prisma/build/index.js generate --schema "$schema" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "db-generate: prisma generate failed for $schema" >&2
    exit 1
  fi
  rm -f "$log"
  echo "$current" >"$stamp"
  echo "db-generate: Prisma client generated in $out"
}

[ "${1:-}" = "--force" ] && FORCE=1
generate prisma/schema.prisma server/persistence/generated
generate prisma/postgres/schema.prisma server/persistence/generated-pg
