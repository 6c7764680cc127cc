#!/usr/bin/env bash
# `make test`'s main suite as two pytest runs side by side, one per core of a 2-core machine:
#   brokers: tests/integration, tests/differential, tests/oracle (Kafka brokers, coordinator JVMs:
#            much of their time is spent waiting on another process), and the standalone-cluster
#            test (its JVMs too), which evens the two runs' lengths (alone, the local run was
#            35:42 and the brokers run 26:59);
#   local:   every other test (unit, in-process Spark, spark-submit, Airflow).
# Each run has its own session fixtures and its own temporary directory. The local run's output
# streams here; the brokers run's is written to a log and printed when both have ended. The
# fault suite runs afterwards, alone (its memory and concurrency tests need a quiet machine).
# The exit code is non-zero when either run failed.
#
#   run_tests.sh PYTHON [PYTEST_ARGS...]
set -uo pipefail

py="$1"
shift
broker_dirs=(tests/integration tests/differential tests/oracle tests/test_spark_standalone.py)
ignores=()
for dir in "${broker_dirs[@]}"; do ignores+=("--ignore=$dir"); done

work="$(mktemp -d "${TMPDIR:-/tmp}/offsetlake-tests.XXXXXX")"
log="$work/brokers.log"
echo "test: the brokers run (${broker_dirs[*]}) starts beside this one; its output follows" \
     "this run's (log: $log)"
"$py" -m pytest --durations=40 --basetemp="$work/brokers" "$@" "${broker_dirs[@]}" >"$log" 2>&1 &
brokers=$!
# Stop the brokers run too when this script is interrupted.
trap 'kill "$brokers" 2>/dev/null' INT TERM

"$py" -m pytest --durations=40 --basetemp="$work/local" "$@" "${ignores[@]}"
local_rc=$?
wait "$brokers"
brokers_rc=$?
trap - INT TERM

echo
echo "==================== brokers run (${broker_dirs[*]}) ===================="
cat "$log"
echo "test: local run exit $local_rc, brokers run exit $brokers_rc"
# pytest exits 5 when a run selected no test (a -k that matches only one side): not a failure.
for rc in "$local_rc" "$brokers_rc"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then exit "$rc"; fi
done
if [ "$local_rc" -eq 5 ] && [ "$brokers_rc" -eq 5 ]; then exit 5; fi
rm -rf "$work"
