# The test suite's server folders, sourced by scripts/test (tests/servers.py derives the same):
#   DBSWARM_TEST_SERVERS_DIR   the shared set (default /tmp/dbswarm-test-servers)
#   DBSWARM_FAULT_SERVERS_DIR  the fault tests' own set (the servers they stop): default DIR-faults
#   DBSWARM_ALT_SERVERS_DIR    the optional-statistics tests' set (performance_schema on, pg_stat_statements
#                              not preloaded: tests/servers.py ALT_OPTIONS): default DIR-alt
# (and scripts/lib/sam-cli-dir: the SAM CLI's virtualenv, DIR-sam-cli when DIR was given): two
# suites on one machine with a DIR each share no server and no install folder.
dbswarm_servers_dir=${DBSWARM_TEST_SERVERS_DIR:-/tmp/dbswarm-test-servers}
dbswarm_servers_dir=${dbswarm_servers_dir%/}
export DBSWARM_FAULT_SERVERS_DIR=${DBSWARM_FAULT_SERVERS_DIR:-$dbswarm_servers_dir-faults}
export DBSWARM_ALT_SERVERS_DIR=${DBSWARM_ALT_SERVERS_DIR:-$dbswarm_servers_dir-alt}
