#!/usr/bin/env bash
# Copies one release's Java group coordinator (kafka-group-coordinator and its runtime dependencies)
# from Maven Central into ${OFFSETLAKE_CACHE:-.cache}/oracle-<version>/libs, the classpath the
# coordinator oracle is compiled against and runs on (tests/oracle/runner.py). Idempotent: does
# nothing when the jars are already there. Maven's local repository stays the default (~/.m2).
#
#   fetch.sh            the default release (<kafka.version> in pom.xml)
#   fetch.sh 3.9.2 ...  those releases
#   fetch.sh --all      every release the oracle supports (<oracle.versions> in pom.xml)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
pom="$here/pom.xml"
default_version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")"
if [[ -z "$default_version" ]]; then
  echo "fetch.sh: no <kafka.version> in $pom" >&2
  exit 1
fi
if [[ "${1:-}" == "--all" ]]; then
  set -- $(sed -n 's:.*<oracle.versions>\(.*\)</oracle.versions>.*:\1:p' "$pom")
fi
if (( $# > 1 )); then
  for v in "$@"; do bash "$here/fetch.sh" "$v"; done
  exit 0
fi
version="${1:-$default_version}"

cache="${OFFSETLAKE_CACHE:-.cache}"
[[ "$cache" = /* ]] || cache="$root/$cache"
exec bash "$root/build/copy_jars.sh" "$pom" "$version" "$cache/oracle-$version" "Group coordinator" -DincludeScope=runtime
