#!/usr/bin/env bash
# `make test`: every test, in two lanes side by side, one per core of a 2-core machine:
#   brokers: tests/integration, tests/differential, tests/oracle (Kafka brokers, coordinator JVMs:
#            much of their time is spent waiting on another process), then the fault suite
#            (tests/faults, its own pytest run: the `faults` marker keeps it out of the others);
#   local:   every other test (unit, in-process Spark, spark-submit, Airflow).
# Each pytest run has its own session fixtures and its own temporary directory. The local lane's
# output streams here; the brokers lane's is written to a log and printed when both have ended
# (each run ends with its 40 slowest tests). The exit code is the first failing run's.
#
#   run_tests.sh PYTHON [PYTEST_ARGS...]
set -uo pipefail

py="$1"
shift
broker_dirs=(tests/integration tests/differential tests/oracle)
ignores=()
for dir in "${broker_dirs[@]}"; do ignores+=("--ignore=$dir"); done

work="$(mktemp -d "${TMPDIR:-/tmp}/offsetlake-tests.XXXXXX")"
log="$work/brokers.log"

# pytest exits 5 when a run selected no test (a -k that matches one lane only): not a failure.
failed() { [ "$1" -ne 0 ] && [ "$1" -ne 5 ]; }

brokers_lane() {
  "$py" -m pytest --durations=40 --basetemp="$work/brokers" "$@" "${broker_dirs[@]}"
  local rc=$?
  echo
  echo "==================== fault suite (tests/faults) ===================="
  "$py" -m pytest -m faults --durations=40 --basetemp="$work/faults" "$@" tests/faults
  local faults_rc=$?
  echo "test: brokers run exit $rc, fault suite exit $faults_rc"
  if failed "$rc"; then return "$rc"; fi
  if failed "$faults_rc"; then return "$faults_rc"; fi
  return 0
}

echo "test: the brokers lane (${broker_dirs[*]}, then tests/faults) starts beside this one;" \
     "its output follows this run's (log: $log)"
brokers_lane "$@" >"$log" 2>&1 &
brokers=$!
# Stop the brokers lane too when this script is interrupted.
trap 'pkill -P "$brokers" 2>/dev/null; kill "$brokers" 2>/dev/null' INT TERM

"$py" -m pytest --durations=40 --basetemp="$work/local" "$@" "${ignores[@]}"
local_rc=$?
wait "$brokers"
brokers_rc=$?
trap - INT TERM

echo
echo "==================== brokers lane (${broker_dirs[*]}, then tests/faults) ===================="
cat "$log"
echo "test: local run exit $local_rc, brokers lane exit $brokers_rc"
if failed "$local_rc"; then exit "$local_rc"; fi
if failed "$brokers_rc"; then exit "$brokers_rc"; fi
rm -rf "$work"
