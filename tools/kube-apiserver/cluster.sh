#!/usr/bin/env bash
# Starts and stops a real, single-node Kubernetes control plane (etcd + kube-apiserver, no scheduler, no kubelet)
# on free loopback ports, for the integration tests. The binaries come from build.sh (built once, cached).
#
#   cluster.sh start DIR          build or reuse the binaries, start etcd and kube-apiserver, write into DIR:
#                                   admin.kubeconfig    user "admin" in system:masters
#                                   nobody.kubeconfig   user "nobody", no grants at all
#                                   sa.kubeconfig       service account election-it/orders-controller with a
#                                                       TokenRequest token, bound by docs/deploy/rbac.yaml
#                                   pod/                what a pod of that service account sees under
#                                                       /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt,
#                                                       namespace), and pod/env (KUBERNETES_SERVICE_HOST/PORT)
#                                   cluster.env         the ports, PIDs and paths, as shell variables
#   cluster.sh stop DIR           stop both by PID (the data stays in DIR until it is deleted)
#   cluster.sh kill-apiserver DIR | kill-etcd DIR        SIGKILL one of them (an outage)
#   cluster.sh start-apiserver DIR | start-etcd DIR      start it again on the same port and data
#
# Everything listens on 127.0.0.1 only. The API level is Kubernetes 1.20 (see docs/testing.md).
# With AUDIT_LEASE_WRITES=1 in the environment of start (or start-apiserver), the server also writes DIR/audit.log:
# one JSON line per Lease create, update or patch, with its request body and the server's own microsecond timestamps
# (when the request came in, when its answer was complete), for measurements that must date a write on the server.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CACHE="${ELECTION_KUBE_CACHE:-$HOME/.cache/election-policy/kubernetes}"
BIN="$CACHE/bin"

say() { echo "[kube-apiserver] $*" >&2; }
die() { echo "[kube-apiserver] $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until the command succeeds; returns 1 at the deadline, 2 at once if the process $2 (this shell's child)
# exited meanwhile, so a server that dies on start fails in milliseconds, not at the deadline.
wait_until() { # seconds, pid, command...
  local deadline=$(( $(date +%s) + $1 )) pid=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || return 2
    (( $(date +%s) < deadline )) || return 1
    sleep 0.2
  done
}

# Stops the process just started (by PID) and fails, saying why and showing the end of its log.
not_ready() { # dir, name, pid, status of wait_until, address, seconds
  local dir=$1 name=$2 pid=$3 status=$4 address=$5 seconds=$6 why
  if (( status == 2 )); then
    local code=0; wait "$pid" 2>/dev/null || code=$?
    why="$name exited (status $code) before it answered on $address"
  else
    why="$name did not answer on $address within $seconds s"
  fi
  kill_pid "$dir" "$name" KILL
  echo "[kube-apiserver] $why; the last lines of $dir/$name.log:" >&2
  tail -n 15 "$dir/$name.log" >&2
  exit 1
}

# What the script needs besides the binaries; checked first, so a missing tool is named as such.
require_tools() {
  local missing=() t
  for t in curl python3 openssl; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
  (( ${#missing[@]} == 0 )) || die "cluster.sh needs ${missing[*]} on the PATH (apt-get install ${missing[*]})"
}

pki() {
  local d=$1/pki
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=election-it-ca" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$d/apiserver.key" \
    -out "$d/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >"$d/apiserver.ext"
  openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
    -extfile "$d/apiserver.ext" -out "$d/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
  openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  local admin nobody
  admin=$(openssl rand -hex 16); nobody=$(openssl rand -hex 16)
  printf '%s,admin,uid-admin,"system:masters"\n%s,nobody,uid-nobody\n' "$admin" "$nobody" >"$d/tokens.csv"
  echo "$admin" >"$d/admin.token"; echo "$nobody" >"$d/nobody.token"
  chmod 600 "$d"/*.key "$d/tokens.csv" "$d"/*.token
}

start_etcd() {
  local dir=$1; . "$dir/cluster.env"
  "$BIN/etcd" --name election-it --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "election-it=http://127.0.0.1:$ETCD_PEER_PORT" \
    --listen-metrics-urls "" >>"$dir/etcd.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/etcd.pid"
  local status=0
  wait_until 30 "$pid" curl -sf "http://127.0.0.1:$ETCD_PORT/health" || status=$?
  (( status == 0 )) || not_ready "$dir" etcd "$pid" "$status" "127.0.0.1:$ETCD_PORT" 30
}

start_apiserver() {
  local dir=$1; . "$dir/cluster.env"
  local p=$dir/pki
  local audit=()
  if [[ "${AUDIT_LEASE_WRITES:-}" == 1 ]]; then
    cat >"$dir/audit-policy.yaml" <<'POLICY'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  verbs: ["create", "update", "patch"]
  resources: [{group: "coordination.k8s.io", resources: ["leases"]}]
- level: None
POLICY
    audit=(--audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/audit.log" --audit-log-mode blocking
      --audit-log-format json)
  fi
  "$BIN/kube-apiserver" "${audit[@]}" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" --insecure-port 0 \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --token-auth-file "$p/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$p/sa.pub" \
    --service-account-signing-key-file "$p/sa.key" --api-audiences https://kubernetes.default.svc \
    --service-cluster-ip-range 10.0.0.0/24 --cert-dir "$dir/apiserver-certs" \
    --enable-priority-and-fairness=false --profiling=false --logtostderr=true --v=1 >>"$dir/apiserver.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/apiserver.pid"
  local status=0
  wait_until 60 "$pid" curl -sf --cacert "$p/ca.crt" -H "Authorization: Bearer $(cat "$p/admin.token")" \
    "https://127.0.0.1:$API_PORT/readyz" || status=$?
  (( status == 0 )) || not_ready "$dir" apiserver "$pid" "$status" "https://127.0.0.1:$API_PORT/readyz" 60
}

kill_pid() { # dir (absolute), name, signal
  local f=$1/$2.pid
  [[ -f $f ]] || return 0
  local pid; pid=$(cat "$f")
  # Only a process of this cluster: its command line names the directory (a stale PID may have been reused).
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$1/"; then
    kill "-$3" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

kubeconfig() { # dir, file, user, token
  local k=$1/$2
  "$BIN/kubectl" --kubeconfig "$k" config set-cluster election-it --server "https://127.0.0.1:$API_PORT" \
    --certificate-authority "$1/pki/ca.crt" --embed-certs=true >/dev/null
  "$BIN/kubectl" --kubeconfig "$k" config set-credentials "$3" --token "$4" >/dev/null
  "$BIN/kubectl" --kubeconfig "$k" config set-context "$3" --cluster election-it --user "$3" \
    --namespace default >/dev/null
  "$BIN/kubectl" --kubeconfig "$k" config use-context "$3" >/dev/null
  chmod 600 "$k"
}

stop() { # dir: both, by PID; nothing to do where nothing runs
  kill_pid "$1" apiserver TERM; kill_pid "$1" etcd TERM
}

# Servers of an earlier cluster in DIR whose PID files are gone (DIR deleted by "mvn clean" after a build was
# killed): found by the directory their command line names (etcd's --data-dir, kube-apiserver's --cert-dir).
stop_strays() { # dir (absolute)
  local pid args
  for pid in $(pgrep -f -- "$1/" || true); do
    args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    if [[ $args == *"--data-dir $1/etcd "* || $args == *"--cert-dir $1/apiserver-certs "* ]]; then
      say "stopping a server left running in $1 (PID $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

start() {
  local dir=$1
  require_tools
  bash "$here/build.sh"
  # A cluster already started in DIR (a build killed before its post-integration-test, a second start) is
  # stopped first: deleting its directory would leave it running, with no PID file left to stop it by.
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
  stop "$dir"; stop_strays "$dir"
  rm -rf "$dir"; mkdir -p "$dir"
  # A start that fails part-way stops what it started (the build's post-integration-test will not run).
  trap 'status=$?; (( status == 0 )) || stop "'"$dir"'"' EXIT
  pki "$dir"
  cat >"$dir/cluster.env" <<ENV
ETCD_PORT=$(free_port)
ETCD_PEER_PORT=$(free_port)
API_PORT=$(free_port)
ENV
  . "$dir/cluster.env"
  local t0; t0=$(date +%s%N)
  start_etcd "$dir"
  start_apiserver "$dir"
  kubeconfig "$dir" admin.kubeconfig admin "$(cat "$dir/pki/admin.token")"
  kubeconfig "$dir" nobody.kubeconfig nobody "$(cat "$dir/pki/nobody.token")"
  local k=("$BIN/kubectl" --kubeconfig "$dir/admin.kubeconfig")
  # The service account of docs/deploy/rbac.yaml, in a namespace of its own (the manifest says the namespace must exist).
  local ns=election-it
  "${k[@]}" create namespace "$ns" >/dev/null
  sed -e "s/namespace: orders$/namespace: $ns/" "$repo/docs/deploy/rbac.yaml" | "${k[@]}" apply -f - >/dev/null
  local token
  token=$(echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":["https://kubernetes.default.svc"],"expirationSeconds":86400}}' \
    | "${k[@]}" create --raw "/api/v1/namespaces/$ns/serviceaccounts/orders-controller/token" -f - \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["token"])')
  [[ -n $token ]] || die "TokenRequest for $ns/orders-controller returned no token"
  kubeconfig "$dir" sa.kubeconfig orders-controller "$token"
  "$BIN/kubectl" --kubeconfig "$dir/sa.kubeconfig" config set-context orders-controller --namespace "$ns" >/dev/null
  mkdir -p "$dir/pod/serviceaccount"
  printf '%s' "$token" >"$dir/pod/serviceaccount/token"
  cp "$dir/pki/ca.crt" "$dir/pod/serviceaccount/ca.crt"
  printf '%s' "$ns" >"$dir/pod/serviceaccount/namespace"
  printf 'KUBERNETES_SERVICE_HOST=127.0.0.1\nKUBERNETES_SERVICE_PORT=%s\n' "$API_PORT" >"$dir/pod/env"
  cat >>"$dir/cluster.env" <<ENV
CLUSTER_DIR=$dir
KUBECTL=$BIN/kubectl
SA_NAMESPACE=$ns
SA_NAME=orders-controller
ENV
  trap - EXIT
  say "ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms: https://127.0.0.1:$API_PORT ($("$BIN/kube-apiserver" --version)), etcd 127.0.0.1:$ETCD_PORT; kubeconfigs in $dir"
}

cmd=${1:-}; dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: cluster.sh start|stop|kill-apiserver|kill-etcd|start-apiserver|start-etcd DIR"
if [[ $cmd != start ]]; then
  [[ -d $dir || $cmd == stop ]] || die "$dir does not exist: no cluster was started there"
  [[ -d $dir ]] || { say "nothing to stop in $dir"; exit 0; }
  dir=$(cd "$dir" && pwd)
fi
case $cmd in
  start) start "$dir" ;;
  stop) stop "$dir"; say "stopped ($dir)" ;;
  kill-apiserver) kill_pid "$dir" apiserver KILL ;;
  kill-etcd) kill_pid "$dir" etcd KILL ;;
  start-apiserver) require_tools; start_apiserver "$dir" ;;
  start-etcd) require_tools; start_etcd "$dir" ;;
  *) die "unknown command '$cmd'; accepted: start, stop, kill-apiserver, kill-etcd, start-apiserver, start-etcd" ;;
esac
