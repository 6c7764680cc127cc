#!/usr/bin/env bash
# Copies Kafka Streams and its runtime dependencies from Maven Central into
# ${OFFSETLAKE_CACHE:-.cache}/streams-<version>/libs, the classpath the integration suite compiles
# and runs its Streams application with (tests/integration/streams_app.py). Idempotent.
#
#   fetch.sh            the suite's broker release (<kafka.version> in build/kafka/pom.xml)
#   fetch.sh 4.4.0 ...  those releases
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if (( $# > 1 )); then
  for v in "$@"; do bash "$here/fetch.sh" "$v"; done
  exit 0
fi
version="${1:-$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$root/build/kafka/pom.xml")}"
cache="${OFFSETLAKE_CACHE:-.cache}"
[[ "$cache" = /* ]] || cache="$root/$cache"
exec bash "$root/build/copy_jars.sh" "$here/pom.xml" "$version" "$cache/streams-$version" "Kafka Streams"
