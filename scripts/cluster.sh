#!/usr/bin/env bash
# Several lab servers on this machine, in one command: PostgreSQL, Redis, two
# lab servers and nginx in front of them, all on loopback. Runs in the
# foreground; Ctrl-C (or SIGTERM) stops everything. The embedded default
# stays `npm start`; this is the hosted shape (README "Several lab servers").
#
#   bash scripts/cluster.sh
#
# Settings (environment): PUBLIC_PORT (3000, nginx: open this one),
# LAB_PORTS ("3101 3102"), PG_PORT (55432), REDIS_PORT (56379),
# MGPULAB_CLUSTER_DIR (./data/cluster: PostgreSQL's files, logs, the lab's data).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_debian_packages python3 python3-torch postgresql redis-server nginx-light
ensure_node_modules
ensure_next_build

dir=$(realpath -m "${MGPULAB_CLUSTER_DIR:-data/cluster}")
public=${PUBLIC_PORT:-3000}
read -r -a lab_ports <<<"${LAB_PORTS:-3101 3102}"
pg_port=${PG_PORT:-55432}
redis_port=${REDIS_PORT:-56379}
mkdir -p "$dir/logs" "$dir/redis" "$dir/nginx/temp" "$dir/lab"

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pg_bin/initdb" ] || die "PostgreSQL's server programs are missing: install Debian's postgresql"
# PostgreSQL refuses to run as root: as root, it runs as Debian's postgres user.
as_pg=()
if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); fi
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$dir"; then
  die "PostgreSQL runs as the postgres user, who cannot reach $dir: choose MGPULAB_CLUSTER_DIR under folders others may enter (chmod o+x)"
fi
if [ ! -f "$dir/pg/PG_VERSION" ]; then
  say "creating the PostgreSQL cluster in $dir/pg"
  mkdir -p "$dir/pg"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir/pg"; chmod 700 "$dir/pg"; fi
  "${as_pg[@]}" "$pg_bin/initdb" -D "$dir/pg" -U lab --auth=trust >"$dir/logs/initdb.log"
fi

pids=()
redis_pid=
# Stops in reverse order of need: the balancer and the lab servers first (they
# save and give up their leases through Redis and PostgreSQL), then Redis, then
# PostgreSQL. A part that is still there after 15 s is killed.
stop_one() {
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 1 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
stop_all() {
  say "stopping"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do stop_one "$pid"; done
  [ -n "$redis_pid" ] && stop_one "$redis_pid"
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/pg" -m fast stop >/dev/null 2>&1 || true
}
trap stop_all EXIT
trap 'exit 0' INT TERM

"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/pg" -w -l "$dir/pg/server.log" \
  -o "-p $pg_port -k $dir/pg -c listen_addresses=127.0.0.1" start >/dev/null
"${as_pg[@]}" "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U lab -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'lab'" | grep -q 1 ||
  "${as_pg[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U lab lab
say "PostgreSQL on 127.0.0.1:$pg_port"

redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir/redis" --save 60 1 >"$dir/logs/redis.log" 2>&1 &
redis_pid=$!
say "Redis on 127.0.0.1:$redis_port"

export MGPULAB_DATABASE_URL="postgresql://lab@127.0.0.1:$pg_port/lab"
export MGPULAB_REDIS_URL="redis://127.0.0.1:$redis_port"
export MGPULAB_ALLOWED_ORIGINS="http://127.0.0.1:$public${MGPULAB_ALLOWED_ORIGINS:+,$MGPULAB_ALLOWED_ORIGINS}"
export MGPULAB_DATA_DIR="$dir/lab"
export NODE_ENV=production HOST=127.0.0.1
for port in "${lab_ports[@]}"; do
  log="$dir/logs/lab-$port.log"
  PORT=$port node --import tsx server/main.ts >"$log" 2>&1 &
  pids+=($!)
  # One at a time: the first applies the migrations and makes the shared auth secret.
  for _ in $(seq 1 240); do
    grep -q '"listening"' "$log" && break
    kill -0 "${pids[-1]}" 2>/dev/null || die "the lab server on $port stopped: $(tail -5 "$log")"
    sleep 0.5
  done
  grep -q '"listening"' "$log" || die "the lab server on $port did not start: see $log"
  say "lab server on 127.0.0.1:$port (log: $log)"
done

node --import tsx scripts/nginx-conf.ts "$public" "$dir/nginx" "${lab_ports[@]}" >"$dir/nginx/nginx.conf"
nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e stderr -g "daemon off;" 2>"$dir/logs/nginx.log" &
pids+=($!)
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$public") 2>/dev/null && break
  kill -0 "${pids[-1]}" 2>/dev/null || die "nginx stopped: $(tail -5 "$dir/logs/nginx.log")"
  sleep 0.1
done
token=$(grep -o '"signInUrl":"[^"]*' "$dir/logs/lab-${lab_ports[0]}.log" | tail -1 | sed 's/.*token=//')
say "nginx on http://127.0.0.1:$public balances ${lab_ports[*]}"
say "open the lab (this link signs you in once): http://127.0.0.1:$public/api/auth/local-token?token=$token"
wait -n "${pids[@]}" "$redis_pid" || true
say "a part of the cluster stopped; see $dir/logs"
