#!/usr/bin/env bash
# `make test`: every test, as two legs side by side, one per core of a 2-core machine. Each leg is
# one pytest run of part of the main suite and part of the fault suite (`-m 'faults or not
# faults'`: pyproject.toml deselects the `faults` marker by default), so the fault cases share the
# leg's warm Spark session for their reference runs and reruns (a fault suite run of its own
# started a session and ran its reference runs cold: about 70-80 s a leg):
#   brokers: tests/integration, tests/differential, tests/oracle (Kafka brokers, coordinator JVMs:
#            much of their time is spent waiting on another process), the standalone-cluster
#            test and test_lag.py (in-process Spark, moved here to even the legs: the local leg
#            was the longer by 226 s and 443 s in two full runs here, and CI stopped it at its
#            limit after the brokers leg had ended; test_lag.py took 121 s and 192 s); then the
#            fault cases in faults_brokers below;
#   local:   every other main-suite test (unit, in-process Spark, spark-submit, Airflow) and the
#            rest of the fault suite.
# The fault suite used to run alone after both main runs (76 min in all, the CI limit being 90):
# split between the legs, it runs beside the other leg's tests instead of after them. Its cases
# measure their own process tree (memory) and coordinate through the lake's lock and progress
# lines, not through timing, so a busy neighbour slows them without changing what they check.
# Each pytest run has its own session fixtures and its own temporary directory. The local leg's
# output streams here; the brokers leg's is written to a log and printed when both have ended.
# The exit code is non-zero when any run failed.
#
#   run_tests.sh PYTHON [PYTEST_ARGS...]
set -uo pipefail

py="$1"
shift
broker_dirs=(tests/integration tests/differential tests/oracle tests/test_spark_standalone.py
             tests/test_lag.py)
# The fault cases of the brokers leg (the kill -9 cases, the concurrent runs and the damaged
# inputs), chosen so that both legs end at about the same time by the durations of a run here
# (main part, then fault part, each its own pytest run then: local 1887 s + 372 s, brokers
# 1763 s + 555 s; one run per leg, in a fresh clone: local 2087 s, brokers 2130 s); the clean
# run they compare with is an in-process run, cheap in both legs.
faults_brokers=(tests/faults/test_crashes.py tests/faults/test_concurrency.py
                tests/faults/test_damaged_inputs.py tests/faults/test_incremental_crash.py)
ignores=()
for path in "${broker_dirs[@]}" "${faults_brokers[@]}"; do ignores+=("--ignore=$path"); done
work="$(mktemp -d "${TMPDIR:-/tmp}/offsetlake-tests.XXXXXX")"
log="$work/brokers.log"
echo "test: the brokers leg (${broker_dirs[*]}, then ${faults_brokers[*]}) starts beside this" \
     "one; its output follows this leg's (log: $log)"

# pytest exits 5 when a run selected no test (a -k that matches only the other leg): not a failure.
leg() {  # leg NAME PYTEST_ARGS...: the leg's one pytest run
  local name="$1"
  shift
  "$py" -m pytest -m 'faults or not faults' --durations=40 --basetemp="$work/$name" "$@"
}

leg brokers "$@" "${broker_dirs[@]}" "${faults_brokers[@]}" >"$log" 2>&1 &
brokers=$!
# Stop the brokers leg too when this script is interrupted.
trap 'kill "$brokers" 2>/dev/null' INT TERM

leg local "$@" "${ignores[@]}" tests
local_rc=$?
wait "$brokers"
brokers_rc=$?
trap - INT TERM

echo
echo "==================== brokers leg (${broker_dirs[*]}, then ${faults_brokers[*]}) ===================="
cat "$log"
echo "test: local leg exit $local_rc, brokers leg exit $brokers_rc"
for rc in "$local_rc" "$brokers_rc"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then exit "$rc"; fi
done
if [ "$local_rc" -eq 5 ] && [ "$brokers_rc" -eq 5 ]; then exit 5; fi
rm -rf "$work"
