#!/usr/bin/env bash
# Copies the dependencies of one Maven pom at one Kafka version into DEST/libs, the way both
# fetch scripts (build/kafka, build/oracle) need it: idempotent (a .complete marker), and into a
# scratch directory moved into place only when complete, so an interrupted fetch never leaves a
# half-filled libs/ that looks finished. Maven's local repository stays the default (~/.m2).
#
#   copy_jars.sh POM VERSION DEST LABEL [MVN_ARG ...]
set -euo pipefail

pom="$1" version="$2" dest="$3" label="$4"
shift 4
if [[ -f "$dest/libs/.complete" ]]; then
  echo "$label $version jars already in $dest/libs"
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch: mvn (Maven) is not installed" >&2; exit 1; }

mkdir -p "$dest"
scratch="$(mktemp -d "$dest/libs.partial.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
echo "Fetching $label $version jars from Maven Central into $dest/libs ..."
start=$SECONDS
mvn -q -B -Dstyle.color=never -f "$pom" -Dkafka.version="$version" \
  dependency:copy-dependencies -DoutputDirectory="$scratch" "$@"
touch "$scratch/.complete"
rm -rf "$dest/libs"
mv "$scratch" "$dest/libs"
trap - EXIT
echo "$label $version: $(ls "$dest/libs" | wc -l) jars in $dest/libs ($((SECONDS - start)) s)"
