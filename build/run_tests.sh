#!/usr/bin/env bash
# `make test`: every test, as two legs side by side, one per core of a 2-core machine. Each leg is
# a main-suite pytest run followed by a fault-suite pytest run (the `faults` marker):
#   brokers: tests/integration, tests/differential, tests/oracle (Kafka brokers, coordinator JVMs:
#            much of their time is spent waiting on another process), the standalone-cluster
#            test and test_lag.py (in-process Spark, moved here to even the legs: the local leg
#            was the longer by 226 s and 443 s in two full runs here, and CI stopped it at its
#            limit after the brokers leg had ended; test_lag.py took 121 s and 192 s); then the
#            fault cases in faults_brokers below;
#   local:   every other main-suite test (unit, in-process Spark, spark-submit, Airflow); then the
#            rest of the fault suite.
# The fault suite used to run alone after both main runs (76 min in all, the CI limit being 90):
# split between the legs, it runs beside the other leg's tail instead of after it. Its cases
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
# inputs), chosen so that both legs end at about the same time by the durations of a CI run (the
# local leg's main part is the longer: 4969 s against 4145 s in the CI of 8279a48, whose brokers
# leg's fault part took about 1450 s; since then the brokers leg lost more: the differential
# suite's decoding once, the kill -9 cases' reruns in the suite's session); the clean run they
# compare with is an in-process run, cheap to make in both legs.
faults_brokers=(tests/faults/test_crashes.py tests/faults/test_concurrency.py
                tests/faults/test_damaged_inputs.py tests/faults/test_incremental_crash.py)
ignores=()
for dir in "${broker_dirs[@]}"; do ignores+=("--ignore=$dir"); done
fault_ignores=()
for file in "${faults_brokers[@]}"; do fault_ignores+=("--ignore=$file"); done

work="$(mktemp -d "${TMPDIR:-/tmp}/offsetlake-tests.XXXXXX")"
log="$work/brokers.log"
echo "test: the brokers leg (${broker_dirs[*]}, then ${faults_brokers[*]}) starts beside this" \
     "one; its output follows this leg's (log: $log)"

leg() {  # leg NAME MAIN_ARGS... -- FAULT_ARGS...: the main run, then the fault run (always)
  local name="$1" main=() main_rc fault_rc rc
  shift
  while [ "$1" != "--" ]; do main+=("$1"); shift; done
  shift
  "$py" -m pytest --durations=40 --basetemp="$work/$name" "${main[@]}"
  main_rc=$?
  "$py" -m pytest -m faults --durations=40 --basetemp="$work/$name-faults" "$@"
  fault_rc=$?
  # pytest exits 5 when a run selected no test (a -k that matches only one run): not a failure.
  for rc in "$main_rc" "$fault_rc"; do
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then return "$rc"; fi
  done
  if [ "$main_rc" -eq 5 ] && [ "$fault_rc" -eq 5 ]; then return 5; fi
  return 0
}

leg brokers "$@" "${broker_dirs[@]}" -- "$@" "${faults_brokers[@]}" >"$log" 2>&1 &
brokers=$!
# Stop the brokers leg too when this script is interrupted.
trap 'kill "$brokers" 2>/dev/null' INT TERM

leg local "$@" "${ignores[@]}" -- "$@" "${fault_ignores[@]}" tests/faults
local_rc=$?
wait "$brokers"
brokers_rc=$?
trap - INT TERM

echo
echo "==================== brokers leg (${broker_dirs[*]}, then ${faults_brokers[*]}) ===================="
cat "$log"
echo "test: local leg exit $local_rc, brokers leg exit $brokers_rc"
# pytest exits 5 when a run selected no test (a -k that matches only one side): not a failure.
for rc in "$local_rc" "$brokers_rc"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then exit "$rc"; fi
done
if [ "$local_rc" -eq 5 ] && [ "$brokers_rc" -eq 5 ]; then exit 5; fi
rm -rf "$work"
