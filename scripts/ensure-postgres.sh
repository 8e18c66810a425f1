#!/bin/sh
# Makes sure the PostgreSQL 15 server binaries (Debian package postgresql-15) are installed, so the test
# runner's PostgreSQL pass (scripts/run-tests.mjs, test/helpers/postgres.ts) can start a throwaway
# cluster. Called by .ci/run; safe to run again (does nothing when the binaries are there).
set -eu
PG_BIN="${SWITCHYARD_PG_BIN:-/usr/lib/postgresql/15/bin}"
if [ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing postgresql-15 (for the PostgreSQL test pass)" >&2
$SUDO apt-get update -qq
# policy-rc.d-less containers may try to start the packaged cluster; its failure must not fail the install.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends postgresql-15 ||
  [ -x "$PG_BIN/initdb" ]
test -x "$PG_BIN/initdb"
