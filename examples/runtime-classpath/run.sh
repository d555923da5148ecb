#!/usr/bin/env bash
# Checks that election-testkit-fabric8, added in test scope, puts no Vert.x and no Netty jar on the runtime class
# path of an application, in the two shapes of pom.xml: a JOSDK operator on fabric8 7.6.1 and a controller with
# metrics on fabric8 8.0.0. Their test class paths must still have the testkit, and Vert.x for its mock server:
# the check looks at projects where the testkit does bring them. Run "mvn -B install" at the repository root first.
set -euo pipefail
# MVN: the Maven command, e.g. "mvn -o" (default "mvn"). The scope property is includeScope: the plugin has no
# mdep.includeScope, and ignores it (then every scope, test included, is listed).
cd "$(dirname "$0")"

fail() {
  echo "runtime-classpath: FAILED: $*" >&2
  exit 1
}

check() {
  local label=$1 fabric8=$2
  shift 2
  ${MVN:-mvn} -B -q dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile=target/runtime.txt "$@"
  ${MVN:-mvn} -B -q dependency:build-classpath -DincludeScope=test -Dmdep.outputFile=target/test.txt "$@"
  local runtime test
  runtime="$(tr ':' '\n' <target/runtime.txt)"
  test="$(tr ':' '\n' <target/test.txt)"
  grep -q "/kubernetes-client-$fabric8\.jar$" <<<"$runtime" || fail "$label: the runtime class path has no fabric8 $fabric8"
  grep -q "/election-testkit-fabric8-[^/]*\.jar$" <<<"$test" || fail "$label: the test class path has no testkit"
  grep -q "/io/vertx/" <<<"$test" || fail "$label: the test class path has no Vert.x: this check would look at nothing"
  local leaked
  leaked="$(grep -E "/io/(vertx|netty)/|/kubernetes-httpclient-vertx" <<<"$runtime" || true)"
  if [ -n "$leaked" ]; then
    echo "runtime-classpath ($label): $(wc -l <<<"$runtime") runtime jars, of which these come from the testkit's HTTP client:" >&2
    sed 's|.*/||; s|^|  |' <<<"$leaked" >&2
    fail "$label: election-testkit-fabric8 in test scope put Vert.x or Netty on the application's runtime class path"
  fi
  echo "runtime-classpath ($label): $(wc -l <<<"$runtime") runtime jars, no Vert.x or Netty; fabric8 $fabric8," \
    "HTTP client $(grep -Eo "kubernetes-httpclient-[a-z0-9-]+-$fabric8" <<<"$runtime" | sort -u | tr '\n' ' ')"
}

check "JOSDK operator, fabric8 7.6.1" 7.6.1 -Pjosdk-fabric8-7
check "controller with metrics, fabric8 8.0.0" 8.0.0
