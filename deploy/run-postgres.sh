#!/usr/bin/env bash
# Run the PostgreSQL that a fleet of solrace processes shares for its records (players,
# finished races, ratings): every process on every machine gets the same
# SOLRACE_DATABASE_URL. For a fleet on one machine the default SQLite file works too
# (deploy/README.md "The records' database"); PostgreSQL is for several machines.
#
# The first run creates the cluster in $SOLRACE_DATA_DIR/postgres (.data/postgres): a
# database `solrace` owned by a role `solrace` (no superuser), random passwords for it and
# for the superuser `postgres`, connections by password only (scram-sha-256); it writes the
# URL to use, with the password, to $SOLRACE_DATA_DIR/postgres/database-url and the
# superuser's password beside it (both readable by their owner only; neither is printed).
# Then it runs postgres in the foreground on $PG_HOST:$PG_PORT (127.0.0.1:5433): Ctrl-C stops
# it at once (a fast shutdown), SIGTERM once the servers have disconnected. To serve other
# machines, set PG_HOST to an address they reach (and firewall the port to them).
# PostgreSQL refuses to run as root: run as root, the
# server runs as the `postgres` user (made by Debian's package, which
# scripts/ensure-test-tools installs: `apt-get install postgresql`). The servers migrate the
# database themselves at start. Checked by tests/deploy/test_run_postgres.py.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "run-postgres: $*" >&2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$bin" ] || { say "PostgreSQL is not installed (apt-get install postgresql)"; exit 1; }
host=${PG_HOST:-127.0.0.1}
port=${PG_PORT:-5433}
data="$(realpath -m "${SOLRACE_DATA_DIR:-.data}")/postgres"
cluster="$data/cluster"

as_owner=()
if [ "$(id -u)" = 0 ]; then
    as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups --)
fi

if [ ! -f "$cluster/PG_VERSION" ]; then
    mkdir -p "$cluster"
    chmod 700 "$data" "$cluster"
    secret() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
    password=$(secret)
    (umask 077; secret >"$data/superuser-password")
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$data" "$data/superuser-password" "$cluster"
        if ! "${as_owner[@]}" test -w "$cluster"; then
            say "the postgres user cannot reach $cluster: every folder above it must be"
            say "searchable by it (chmod o+x), or set SOLRACE_DATA_DIR to a folder that is"
            rm -rf "$cluster" "$data/superuser-password"
            exit 1
        fi
    fi
    say "creating the cluster in $cluster"
    "${as_owner[@]}" "$bin/initdb" -D "$cluster" -U postgres --pwfile="$data/superuser-password" \
        --auth-local=scram-sha-256 --auth-host=scram-sha-256 -E UTF8 >"$data/initdb.log"
    printf '%s\n' "CREATE ROLE solrace LOGIN PASSWORD '$password'" \
        "CREATE DATABASE solrace OWNER solrace" |
        "${as_owner[@]}" "$bin/postgres" --single -D "$cluster" postgres >>"$data/initdb.log"
    (umask 077; printf 'postgresql+asyncpg://solrace:%s@%s:%s/solrace\n' \
        "$password" "$host" "$port" >"$data/database-url")
fi
say "PostgreSQL on $host:$port, data in $cluster; SOLRACE_DATABASE_URL is in $data/database-url"
exec "${as_owner[@]}" "$bin/postgres" -D "$cluster" -h "$host" -p "$port" -k "$cluster"
