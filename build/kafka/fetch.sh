#!/usr/bin/env bash
# Copies Apache Kafka's jars from Maven Central into ${OFFSETLAKE_CACHE:-.cache}/kafka-<version>/libs,
# the classpath the integration tests run the broker and Kafka's tools from
# (tests/integration/kafka_broker.py). Idempotent: does nothing when the jars are already there.
# Maven's local repository stays the default (~/.m2), so a second clone fetches nothing.
#
#   fetch.sh            the suite's broker version (<kafka.version> in pom.xml)
#   fetch.sh 3.9.2 ...  those versions (any release whose kafka_2.13 and kafka-tools are on Maven Central)
#   fetch.sh --downgrade  the older brokers the downgrade comparison starts
#                       (<downgrade.versions> in pom.xml, tests/integration/test_downgrade_vs_brokers.py)
#   fetch.sh --writers  newer brokers whose snapshots that comparison loads (<writer.versions>)
#   fetch.sh --rolling  the releases the rolling-upgrade log is carried through (<rolling.versions>)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
pom="$here/pom.xml"
default_version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")"
if [[ -z "$default_version" ]]; then
  echo "fetch.sh: no <kafka.version> in $pom" >&2
  exit 1
fi
if [[ "${1:-}" == "--downgrade" ]]; then
  set -- $(sed -n 's:.*<downgrade.versions>\(.*\)</downgrade.versions>.*:\1:p' "$pom")
elif [[ "${1:-}" == "--writers" ]]; then
  set -- $(sed -n 's:.*<writer.versions>\(.*\)</writer.versions>.*:\1:p' "$pom")
elif [[ "${1:-}" == "--rolling" ]]; then
  set -- $(sed -n 's:.*<rolling.versions>\(.*\)</rolling.versions>.*:\1:p' "$pom")
fi
if (( $# > 1 )); then
  for v in "$@"; do bash "$here/fetch.sh" "$v"; done
  exit 0
fi
version="${1:-$default_version}"

cache="${OFFSETLAKE_CACHE:-.cache}"
[[ "$cache" = /* ]] || cache="$root/$cache"
exec bash "$root/build/copy_jars.sh" "$pom" "$version" "$cache/kafka-$version" "Kafka"
