#!/usr/bin/env bash
# Run N solrace server processes on one Redis, on ports BASE .. BASE+N-1 (default: 3 from 8801).
# Uses REDIS_URL when set; otherwise starts one redis-server (AOF on, port $REDIS_PORT or 6390)
# with its own data directory, $SOLRACE_DATA_DIR/redis-PORT (.data/redis-6390 by default), so
# two fleets on two ports never share one. Put a load balancer in front of the processes
# (deploy/nginx.conf or deploy/haproxy.cfg) to serve them all on 127.0.0.1:8765. The records go
# to SOLRACE_DATABASE_URL when it is set (deploy/run-postgres.sh), else to one SQLite file
# under $SOLRACE_DATA_DIR that every process shares. With SOLRACE_METRICS_PORT=M, the
# processes serve /metrics on M .. M+N-1 (on SOLRACE_METRICS_HOST, 127.0.0.1), not publicly.
#
# A process that dies (a crash, a SIGKILL) is started again on its port after a second; the
# others, and Redis, go on. Ctrl-C (or SIGTERM to this script) stops the servers first, then
# Redis: the servers and Redis run in sessions of their own, so the terminal's Ctrl-C reaches
# only this script.
# Checked by tests/deploy/test_run_local.py.
set -euo pipefail
n=${1:-3}
base=${2:-8801}
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || { echo "no $py: run 'make setup' first (or set PYTHON)" >&2; exit 1; }
say() { echo "run-local: $*" >&2; }
# A URL fit for a log line: its password replaced by *** (as the servers' own lines show it).
shown() { sed -E 's#^([a-z]+://[^:/@]*):[^@/]*@#\1:***@#' <<<"$1"; }

declare -A servers=()  # port -> pid
redis_pid=""
stopping=""
stop_all() {
    trap - EXIT INT TERM
    stopping=1
    say "stopping the servers"
    for pid in "${servers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$redis_pid" ]; then
        say "stopping Redis"
        kill -TERM "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
}
trap stop_all EXIT
trap 'exit 130' INT TERM

start_redis() {
    # setsid: a session (and process group) of its own, out of reach of the terminal's ^C.
    setsid redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$redis_data" \
        --appendonly yes --save "" --logfile "$redis_data/redis.log" &
    redis_pid=$!
    say "Redis on port $redis_port started (pid $redis_pid, data in $redis_data)"
    for _ in $(seq 100); do
        if "$py" -c "import socket,sys; s=socket.create_connection(('127.0.0.1',$redis_port));
s.sendall(b'PING\r\n'); sys.exit(0 if s.recv(7).startswith(b'+PONG') else 1)" 2>/dev/null; then
            return
        fi
        sleep 0.1
    done
    say "Redis on port $redis_port did not answer PING (see $redis_data/redis.log)"
}

start_server() {  # start_server PORT
    # With SOLRACE_METRICS_PORT set, each process gets its own: that port plus the process's
    # index, as its public port is BASE plus the index (one port for all: all but the first
    # would fail to bind it, again and again).
    local metrics=()
    if [ "${SOLRACE_METRICS_PORT:-0}" != 0 ]; then
        metrics=(--metrics-port $((SOLRACE_METRICS_PORT + $1 - base)))
    fi
    # setsid too: Ctrl-C reaches this script alone, which stops everything itself, in
    # order (the servers with SIGTERM, then Redis).
    setsid "$py" -m server --host 127.0.0.1 --port "$1" "${metrics[@]}" &
    servers[$1]=$!
    say "server on port $1 started (pid ${servers[$1]})${metrics:+; its /metrics on ${SOLRACE_METRICS_HOST:-127.0.0.1}:${metrics[1]}}"
}

if [ -z "${REDIS_URL:-}" ]; then
    scripts/ensure-redis-server
    redis_port=${REDIS_PORT:-6390}
    redis_data="$(realpath -m "${SOLRACE_DATA_DIR:-.data}")/redis-$redis_port"
    mkdir -p "$redis_data"
    start_redis
    export REDIS_URL="redis://127.0.0.1:$redis_port/0"
fi

for i in $(seq 0 $((n - 1))); do
    start_server $((base + i))
done
say "$n processes on ports $base..$((base + n - 1)), Redis at $(shown "$REDIS_URL")"

# Keep the fleet up: whenever a child ends, start again every child that is gone (Redis from
# its append-only file), not only the one `wait -n` names: children that die at once are
# reaped together (bash reaps the others in the background, during the second's pause), and
# `wait -n` never names those.
gone() {  # gone PID: the child named by `wait -n`, or one that is no more
    [ "$1" = "$ended" ] || ! kill -0 "$1" 2>/dev/null
}
exited() {  # exited PID: how it ended, as far as the script knows
    if [ "$1" = "$ended" ]; then echo "exited with status $status"; else echo "exited"; fi
}
while true; do
    ended=""
    status=0
    wait -n -p ended || status=$?
    [ -n "$stopping" ] && break
    sleep 1
    if [ -n "$redis_pid" ] && gone "$redis_pid"; then
        say "Redis (pid $redis_pid) $(exited "$redis_pid"): starting it again"
        start_redis
    fi
    for port in "${!servers[@]}"; do
        if gone "${servers[$port]}"; then
            say "server on port $port (pid ${servers[$port]}) $(exited "${servers[$port]}"): starting it again"
            start_server "$port"
        fi
    done
done
