#!/usr/bin/env bash
# Brings Apache Kafka (broker and tools, with a reload4j logging binding) into
# .cache/kafka/<version>/libs as plain jars, through Maven, once. The local
# broker that scripts/kafka-local runs for the Kafka tests uses them with
# java -cp; no Kafka distribution tarball and no Docker are needed.
# Idempotent: when the jars are in place it prints where and exits.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${TOKENFEED_KAFKA_VERSION:-3.9.1}"
scala="2.13"
cache="${TOKENFEED_KAFKA_CACHE:-$root/.cache/kafka}"
dest="$cache/$version/libs"
stamp="$cache/$version/.complete"

present() { [ -f "$stamp" ] && [ -f "$dest/kafka_${scala}-$version.jar" ]; }
if present; then
  echo "fetch-kafka: Apache Kafka $version present in $dest"
  exit 0
fi
# Two test fixtures may start at once on a fresh machine: one fetches, the
# other waits for it (bounded) and finds the jars.
mkdir -p "$cache"
exec 9>"$cache/.fetch-$version.lock"
if ! flock -w 600 9; then
  echo "fetch-kafka: another fetch of Kafka $version has held $cache/.fetch-$version.lock for 10 minutes" >&2
  exit 1
fi
if present; then
  echo "fetch-kafka: Apache Kafka $version present in $dest"
  exit 0
fi
command -v mvn >/dev/null || { echo "fetch-kafka: mvn (Maven) is needed; install the Debian package 'maven'" >&2; exit 1; }
command -v java >/dev/null || { echo "fetch-kafka: java is needed; install a JDK 17 (Debian 'openjdk-17-jdk-headless')" >&2; exit 1; }

work="$cache/$version/fetch"
rm -rf "$work" "$dest"
mkdir -p "$work" "$dest"
# The broker logs through slf4j; Kafka 3.9 ships with the reload4j binding
# (log4j 1.x API), so the same log4j.properties syntax works.
cat >"$work/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>tokenfeed.local</groupId>
  <artifactId>kafka-fetch</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${scala}</artifactId>
      <version>${version}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-reload4j</artifactId>
      <version>1.7.36</version>
    </dependency>
    <dependency>
      <groupId>ch.qos.reload4j</groupId>
      <artifactId>reload4j</artifactId>
      <version>1.2.25</version>
    </dependency>
  </dependencies>
</project>
POM
echo "fetch-kafka: fetching Apache Kafka $version through Maven (once) ..."
# A private local repository keeps the fetch self-contained and removable.
if ! mvn -B -q -f "$work/pom.xml" -Dmaven.repo.local="$cache/m2" \
      dependency:copy-dependencies -DoutputDirectory="$dest" -DincludeScope=runtime >"$work/mvn.log" 2>&1; then
  tail -n 40 "$work/mvn.log" >&2
  echo "fetch-kafka: Maven could not fetch Apache Kafka $version (log: $work/mvn.log)" >&2
  exit 1
fi
[ -f "$dest/kafka_${scala}-$version.jar" ] || { echo "fetch-kafka: kafka_${scala}-$version.jar missing after the fetch" >&2; exit 1; }
# The jars are all that is needed; the private repository would double the size.
rm -rf "$work" "$cache/m2"
date -u +%FT%TZ >"$stamp"
echo "fetch-kafka: Apache Kafka $version in $dest ($(ls "$dest" | wc -l) jars)"
