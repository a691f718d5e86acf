#!/usr/bin/env bash
# Run N solrace server processes on one Redis, on ports BASE .. BASE+N-1 (default: 3 from 8801).
# Uses REDIS_URL when set; otherwise starts one redis-server (AOF on, data in .data/shared-redis,
# port $REDIS_PORT or 6390) that every process shares. Put a load balancer in front of the
# processes (deploy/nginx.conf or deploy/haproxy.cfg) to serve them all on 127.0.0.1:8765.
# Ctrl-C stops the servers first, then Redis.
set -euo pipefail
n=${1:-3}
base=${2:-8801}
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || { echo "no $py: run 'make setup' first (or set PYTHON)" >&2; exit 1; }

servers=()
redis_pid=""
stop_all() {
    trap - EXIT INT TERM
    for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$redis_pid" ]; then
        kill -TERM "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

if [ -z "${REDIS_URL:-}" ]; then
    scripts/ensure-redis-server
    redis_port=${REDIS_PORT:-6390}
    data="$PWD/.data/shared-redis"
    mkdir -p "$data"
    redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$data" --appendonly yes \
        --save "" --logfile "$data/redis.log" &
    redis_pid=$!
    for _ in $(seq 100); do
        if "$py" -c "import socket,sys; s=socket.create_connection(('127.0.0.1',$redis_port));
s.sendall(b'PING\r\n'); sys.exit(0 if s.recv(7).startswith(b'+PONG') else 1)" 2>/dev/null; then
            break
        fi
        sleep 0.1
    done
    export REDIS_URL="redis://127.0.0.1:$redis_port/0"
fi

for i in $(seq 0 $((n - 1))); do
    "$py" -m server --host 127.0.0.1 --port $((base + i)) &
    servers+=($!)
done
echo "solrace: $n processes on ports $base..$((base + n - 1)), Redis at $REDIS_URL" >&2
# Stop everything as soon as one server exits: a half-running fleet hides problems.
wait -n "${servers[@]}"
