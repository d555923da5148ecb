#!/usr/bin/env bash
# Starts and stops a real, single-node Kubernetes control plane (etcd + kube-apiserver, no scheduler, no kubelet)
# on free loopback ports, for the integration tests. The binaries come from build.sh (built once, cached).
#
#   cluster.sh start DIR          build or reuse the binaries, start etcd and kube-apiserver, write into DIR:
#                                   admin.kubeconfig    user "admin" in system:masters
#                                   nobody.kubeconfig   user "nobody", no grants at all
#                                   sa.kubeconfig       service account election-it/orders-controller with a
#                                                       TokenRequest token, bound by docs/rbac.yaml
#                                   pod/                what a pod of that service account sees under
#                                                       /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt,
#                                                       namespace), and pod/env (KUBERNETES_SERVICE_HOST/PORT)
#                                   cluster.env         the ports, PIDs and paths, as shell variables
#   cluster.sh stop DIR           stop both by PID (the data stays in DIR until it is deleted)
#   cluster.sh kill-apiserver DIR | kill-etcd DIR        SIGKILL one of them (an outage)
#   cluster.sh start-apiserver DIR | start-etcd DIR      start it again on the same port and data
#
# Everything listens on 127.0.0.1 only. The API level is Kubernetes 1.20 (see docs/testing.md).
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

wait_until() { # seconds, description, command...
  local deadline=$(( $(date +%s) + $1 )) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    (( $(date +%s) < deadline )) || return 1
    sleep 0.2
  done
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
  echo $! >"$dir/etcd.pid"
  wait_until 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health" \
    || die "etcd did not answer on 127.0.0.1:$ETCD_PORT within 30 s; see $dir/etcd.log"
}

start_apiserver() {
  local dir=$1; . "$dir/cluster.env"
  local p=$dir/pki
  "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" --insecure-port 0 \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --token-auth-file "$p/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$p/sa.pub" \
    --service-account-signing-key-file "$p/sa.key" --api-audiences https://kubernetes.default.svc \
    --service-cluster-ip-range 10.0.0.0/24 --cert-dir "$dir/apiserver-certs" \
    --enable-priority-and-fairness=false --profiling=false --logtostderr=true --v=1 >>"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  wait_until 60 apiserver curl -sf --cacert "$p/ca.crt" -H "Authorization: Bearer $(cat "$p/admin.token")" \
    "https://127.0.0.1:$API_PORT/readyz" \
    || die "kube-apiserver was not ready on 127.0.0.1:$API_PORT within 60 s; see $dir/apiserver.log"
}

kill_pid() { # dir, name, signal
  local f=$1/$2.pid
  [[ -f $f ]] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
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

start() {
  local dir=$1
  bash "$here/build.sh"
  rm -rf "$dir"; mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
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
  # The service account of docs/rbac.yaml, in a namespace of its own (the manifest says the namespace must exist).
  local ns=election-it
  "${k[@]}" create namespace "$ns" >/dev/null
  sed -e "s/namespace: orders$/namespace: $ns/" "$repo/docs/rbac.yaml" | "${k[@]}" apply -f - >/dev/null
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
  say "ready in $(( ($(date +%s%N) - t0) / 1000000 )) ms: https://127.0.0.1:$API_PORT ($("$BIN/kube-apiserver" --version)), etcd 127.0.0.1:$ETCD_PORT; kubeconfigs in $dir"
}

cmd=${1:-}; dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: cluster.sh start|stop|kill-apiserver|kill-etcd|start-apiserver|start-etcd DIR"
case $cmd in
  start) start "$dir" ;;
  stop) kill_pid "$dir" apiserver TERM; kill_pid "$dir" etcd TERM; say "stopped ($dir)" ;;
  kill-apiserver) kill_pid "$dir" apiserver KILL ;;
  kill-etcd) kill_pid "$dir" etcd KILL ;;
  start-apiserver) start_apiserver "$(cd "$dir" && pwd)" ;;
  start-etcd) start_etcd "$(cd "$dir" && pwd)" ;;
  *) die "unknown command '$cmd'; accepted: start, stop, kill-apiserver, kill-etcd, start-apiserver, start-etcd" ;;
esac
