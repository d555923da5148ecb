#!/usr/bin/env bash
# Builds the README's quickstart against the installed election-policy artifacts and runs it as a pod would
# run it: with plain java, against an API server found through KUBECONFIG (election-testkit-fabric8's
# embedded Lease API, served by ServeLeaseApi from election-examples' class path),
# until SIGTERM. It must lead and reconcile; on SIGTERM its shutdown hook must stop the reconciler and release
# the Lease. Run "mvn -B install" at the repository root first (it also builds election-examples).
set -euo pipefail
cd "$(dirname "$0")"

examples_dir=../../election-examples/target
version=0.1.0-SNAPSHOT
wait_seconds=60

fail() {
  echo "quickstart: FAILED: $*" >&2
  for log in "$work"/*.log; do
    [ -f "$log" ] && { echo "---- $(basename "$log")"; cat "$log"; }
  done
  exit 1
}

# Waits until FILE contains PATTERN, failing when the process PID ends first or after $wait_seconds.
await_line() {
  local file=$1 pattern=$2 pid=$3
  for _ in $(seq $((wait_seconds * 10))); do
    grep -Eq "$pattern" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "the process ended before printing /$pattern/"
    sleep 0.1
  done
  fail "no /$pattern/ within ${wait_seconds}s"
}

run_once() {
label=$1
shift
echo "quickstart ($label): build the README's coordinates and main (mvn -B -q verify $*)"
mvn -B -q clean verify "$@"
mvn -B -q dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile=target/classpath.txt "$@"
grep -Eo "kubernetes-client-[0-9][^/:]*\.jar" target/classpath.txt | sort -u | sed 's/^/  fabric8: /'

work="$(mktemp -d)"
server_pid=""
controller_pid=""
cleanup() {
  for pid in $controller_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

java -cp "$examples_dir/election-examples-$version.jar:$examples_dir/lib/*" \
  io.github.electionpolicy.testkit.fabric8.ServeLeaseApi --kubeconfig "$work/kubeconfig" >"$work/api-server.log" 2>&1 &
server_pid=$!
await_line "$work/api-server.log" '^kubeconfig: ' "$server_pid"
grep '^lease-api: ' "$work/api-server.log" | sed 's/^/  /'

echo "quickstart ($label): run OrdersController.main (POD_NAME as the downward API would set it)"
env -u LEADER_ELECTION_ENABLED -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT \
  KUBECONFIG="$work/kubeconfig" POD_NAME=orders-controller-0 \
  java -cp "target/classes:$(cat target/classpath.txt)" com.example.orders.OrdersController \
  >"$work/controller.log" 2>&1 &
controller_pid=$!
await_line "$work/controller.log" 'reconcile pass 2: ' "$controller_pid"
grep -E 'Contending|Acquired|reconciling orders|reconcile pass 1:' "$work/controller.log" | sed 's/^/  /'

echo "quickstart ($label): SIGTERM, as Kubernetes stops a pod"
kill -TERM "$controller_pid"
status=0
wait "$controller_pid" || status=$?
controller_pid=""
# 143 = 128 + SIGTERM: the JVM ran its shutdown hooks and exited on the signal.
[ "$status" -eq 143 ] || fail "OrdersController exited with status $status, expected 143 (SIGTERM)"
grep -q 'stopped reconciling orders after' "$work/controller.log" || fail "the reconciler was not stopped"
grep -q 'Exception' "$work/controller.log" && fail "the controller logged an exception"
grep -E 'stopped reconciling orders|Released' "$work/controller.log" | sed 's/^/  /'

kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""
grep -q '^lease default/orders-controller: holder "" (released)' "$work/api-server.log" \
  || fail "the API server does not show the Lease released"
grep '^lease ' "$work/api-server.log" | sed 's/^/  /'
rm -rf "$work"
echo "quickstart ($label): passed (it led, reconciled, and on SIGTERM stopped its reconciler and released its Lease)"
}

run_once "fabric8 8.0.0, as the adapter brings it"
run_once "fabric8 7.6.1, through fabric8's BOM" -Pfabric8-7
grep -q "kubernetes-client-7.6.1.jar" target/classpath.txt || fail "the fabric8-7 run did not use fabric8 7.6.1"
