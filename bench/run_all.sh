#!/usr/bin/env bash
# The comparison suite at a moderate size, one script after the other, each writing
# bench/results/<name>-<date>.json and printing its section (docs/benchmarks.md):
# ~40 min on a 2-CPU machine (vs_sysbench and vs_ycsb ~11 min each, python_ceiling ~7,
# generator_cost ~5, fanout_scaling and aggregation_cost ~3). BENCHMARKS.md's headline is
# bench/acceptance.py's (~1 h, run by hand), as is bench/ab_revisions.py (two revisions).
# Servers: scripts/test-servers start ${DBSWARM_BENCH_SERVERS_DIR:-/tmp/dbswarm-bench-servers}
# (stopped at the end unless KEEP_SERVERS=1).
# MariaDB runs on the mysqlclient driver when it is installed (scripts/install --test
# installs it), else on PyMySQL; DBSWARM_BENCH_MYSQL_DRIVER=pymysql|mysqlclient chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
DIR=${DBSWARM_BENCH_SERVERS_DIR:-/tmp/dbswarm-bench-servers}
trap '[[ ${KEEP_SERVERS:-0} == 1 ]] || scripts/test-servers stop "$DIR" >/dev/null 2>&1 || true' EXIT
scripts/test-servers start "$DIR" >/dev/null
start=$(date +%s)
failed=()  # a failing script is reported at the end; the others still run
"$PY" bench/vs_sysbench.py --time 5 --rounds 3 --tables 8 --table-size 20000 --threads 8,32 --pinned-threads 8 --servers-dir "$DIR" || failed+=("bench/vs_sysbench.py")
"$PY" bench/vs_ycsb.py --time 5 --rounds 3 --recordcount 20000 --threads 8 --ferretdb-recordcount 2000 --servers-dir "$DIR" || failed+=("bench/vs_ycsb.py")
"$PY" bench/generator_cost.py --time 4 --profile-time 2 --noop-rounds 3 --server-rounds 3 --servers-dir "$DIR" || failed+=("bench/generator_cost.py")
"$PY" bench/fanout_scaling.py --time 4 --rounds 2 --max-shards 4 --max-mysql-shards 8 --servers-dir "$DIR" || failed+=("bench/fanout_scaling.py")
"$PY" bench/python_ceiling.py --time 5 --rounds 3 --threads 8 --tables 8 --table-size 20000 --servers-dir "$DIR" || failed+=("bench/python_ceiling.py")
"$PY" bench/aggregation_cost.py --shards 1000,4000 --seconds 1800 || failed+=("bench/aggregation_cost.py")
echo "suite took $(( $(date +%s) - start )) s" >&2
if (( ${#failed[@]} )); then echo "failed: ${failed[*]}" >&2; exit 1; fi
