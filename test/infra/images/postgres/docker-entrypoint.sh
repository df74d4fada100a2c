#!/usr/bin/env bash
# The official postgres image's entrypoint, for the variables it documents that the chart uses: on an empty
# PGDATA, initdb with POSTGRES_USER and POSTGRES_PASSWORD (and POSTGRES_INITDB_ARGS), password logins from
# any address (scram-sha-256), POSTGRES_DB created; then postgres runs in the foreground.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

if [ "$1" = postgres ]; then
  if [ "$(id -u)" = 0 ]; then
    # As root (no runAsUser): own the data folder, then run as postgres.
    mkdir -p "$PGDATA"
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
  fi
  # On every start, as the official entrypoint: Postgres refuses a data directory that the group may
  # write, which a volume's fsGroup handling makes it (the kubelet, by default, on each mount).
  mkdir -p "$PGDATA"
  chmod 00700 "$PGDATA" || :
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?is required to initialise a database (set POSTGRES_PASSWORD)}"
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments, as in the official image.
    initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") ${POSTGRES_INITDB_ARGS:-}
    printf '\nhost all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
    if [ "$db" != postgres ]; then
      psql -v ON_ERROR_STOP=1 --username "$user" --no-password --dbname postgres --set db="$db" \
        <<<'CREATE DATABASE :"db";'
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop
    echo 'PostgreSQL init process complete; ready for start up.'
  fi
fi

exec "$@"
