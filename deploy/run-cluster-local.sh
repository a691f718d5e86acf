#!/usr/bin/env bash
# A local Redis Cluster of three primaries, then deploy/run-local.sh on it:
#   deploy/run-cluster-local.sh [N] [BASE]     N server processes on ports BASE.. (3 from 8801)
# The nodes listen on $CLUSTER_PORTS (default "7001 7002 7003"), with the append-only file on
# and their data in $SOLRACE_DATA_DIR/cluster/PORT (.data/cluster/PORT by default); a cluster
# made on an earlier run is used again as it is. The servers get REDIS_URL of the first node and find the others themselves (see
# deploy/README.md, "Redis Cluster"). Ctrl-C stops the servers, then the nodes.
# Checked by tests/deploy/test_run_cluster_local.py.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-redis-server
read -r -a ports <<< "${CLUSTER_PORTS:-7001 7002 7003}"

nodes=()
stop_nodes() {
    trap - EXIT INT TERM
    for pid in "${nodes[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${nodes[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_nodes EXIT
trap 'exit 130' INT TERM

for port in "${ports[@]}"; do
    data="${SOLRACE_DATA_DIR:-.data}/cluster/$port"
    mkdir -p "$data"
    data=$(cd "$data" && pwd)  # redis-server runs elsewhere: an absolute path
    # setsid: out of reach of the terminal's ^C, so the servers stop before their Redis.
    setsid redis-server --bind 127.0.0.1 --port "$port" --dir "$data" --appendonly yes --save "" \
        --cluster-enabled yes --cluster-config-file nodes.conf --logfile "$data/redis.log" &
    nodes+=($!)
done
for port in "${ports[@]}"; do
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
done
if ! redis-cli -p "${ports[0]}" cluster info | grep -q "cluster_known_nodes:${#ports[@]}"; then
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-yes >/dev/null
fi
for _ in $(seq 200); do
    redis-cli -p "${ports[0]}" cluster info | grep -q "cluster_state:ok" && break
    sleep 0.1
done
echo "Redis Cluster on ports ${ports[*]}" >&2
REDIS_URL="redis://127.0.0.1:${ports[0]}/0" deploy/run-local.sh "$@"
