#!/usr/bin/env bash
# Builds (once) and caches the real API server the integration tests run against:
#   etcd 3.4.x        from Debian's etcd-server package,
#   kube-apiserver    and kubectl, built from Debian's `kubernetes` source package (v1.20.x) with golang-1.19.
# The binaries land in $ELECTION_KUBE_CACHE/bin (default ~/.cache/election-policy/kubernetes), outside the work
# tree; a second run finds them there and does nothing. Every step says what it does; a step that fails stops
# the script with the step's name and the reason, e.g. "build failed at step 'apt-get source kubernetes': ...".
# Needs root (apt-get) and Debian's archive; nothing else is downloaded.
set -euo pipefail

CACHE="${ELECTION_KUBE_CACHE:-$HOME/.cache/election-policy/kubernetes}"
BIN="$CACHE/bin"
SRC="$CACHE/src"
LOG="$CACHE/build.log"

step_name=""
fail() {
  echo "kube-apiserver build failed at step '$step_name': $1" >&2
  if [[ -s "$LOG" ]]; then echo "--- last lines of $LOG ---" >&2; tail -n 25 "$LOG" >&2; fi
  echo "(to run the build without the real API server: mvn -B install -Delection.apiserver.skip=true; see docs/testing.md)" >&2
  exit 1
}
step() {
  step_name="$1"
  echo "[kube-apiserver build] $step_name" >&2
}
run() { "$@" >>"$LOG" 2>&1 || fail "command '$*' exited with status $? (full output in $LOG)"; }

cached() {
  [[ -x "$BIN/kube-apiserver" && -x "$BIN/kubectl" && -x "$BIN/etcd" ]] || return 1
  echo "[kube-apiserver build] cached: $BIN ($("$BIN/kube-apiserver" --version 2>/dev/null), etcd $("$BIN/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p'))" >&2
}
# Puts a binary into the cache atomically (a copy, then a rename): a build interrupted while copying leaves no
# truncated binary that the check above would take for a built one, and a binary that a running cluster
# executes is replaced, not written over ("Text file busy").
install_bin() { # source, name
  cp "$1" "$BIN/.$2.part" && mv -f "$BIN/.$2.part" "$BIN/$2" || fail "cannot copy $1 into $BIN/$2"
}

cached && exit 0

step "prepare the cache directory $CACHE"
mkdir -p "$CACHE" "$BIN" 2>/dev/null || fail "cannot create $CACHE; set ELECTION_KUBE_CACHE to a writable directory"
# One build at a time per cache: builds of several work trees on one machine share it, and each would delete
# the others' sources. The one that waited finds the binaries built.
exec 9>"$CACHE/.build.lock" || fail "cannot write $CACHE/.build.lock"
if ! flock -n 9; then
  echo "[kube-apiserver build] waiting for another build into $CACHE to finish" >&2
  flock 9 || fail "cannot lock $CACHE/.build.lock"
fi
cached && exit 0
: >"$LOG"
started=$(date +%s)

step "check the machine"
[[ $(id -u) -eq 0 ]] || fail "apt-get needs root; run as root or install etcd-server, golang-1.19-go, rsync, dpkg-dev and golang-github-modern-go-reflect2-dev first"
command -v apt-get >/dev/null || fail "no apt-get: this script builds from Debian's archive"
free_gb=$(df -Pk "$CACHE" | awk 'NR==2 {print int($4/1024/1024)}')
(( free_gb >= 3 )) || fail "only ${free_gb} GB free under $CACHE; the build needs about 2 GB"

step "add a deb-src entry for Debian's archive (apt-get source needs it)"
src_list=/etc/apt/sources.list.d/election-policy-deb-src.sources
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  [[ -n "$codename" ]] || fail "cannot read VERSION_CODENAME from /etc/os-release"
  uri=$(grep -rhs '^URIs:' /etc/apt/sources.list.d/*.sources | head -n1 | awk '{print $2}')
  uri=${uri:-http://deb.debian.org/debian}
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" "$codename" >"$src_list"
fi

step "apt-get update"
run apt-get update

step "apt-get install etcd-server golang-1.19-go rsync dpkg-dev golang-github-modern-go-reflect2-dev"
DEBIAN_FRONTEND=noninteractive run apt-get install -y --no-install-recommends \
  etcd-server golang-1.19-go rsync dpkg-dev golang-github-modern-go-reflect2-dev openssl ca-certificates
install_bin /usr/bin/etcd etcd

step "apt-get source kubernetes"
rm -rf "$SRC" && mkdir -p "$SRC"
(cd "$SRC" && run apt-get source --only-source kubernetes)
tree=$(find "$SRC" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)
[[ -n "$tree" && -f "$tree/cmd/kube-apiserver/apiserver.go" ]] || fail "no kube-apiserver sources in $SRC"

step "replace the vendored modern-go/reflect2 (v1.0.1 panics under Go >= 1.18) with Debian's v1.0.2"
r2=/usr/share/gocode/src/github.com/modern-go/reflect2
[[ -d "$r2" ]] || fail "$r2 missing after installing golang-github-modern-go-reflect2-dev"
rm -rf "$tree/vendor/github.com/modern-go/reflect2"
cp -r "$r2" "$tree/vendor/github.com/modern-go/reflect2"

export PATH="/usr/lib/go-1.19/bin:$PATH" GO111MODULE=off GOFLAGS= GOCACHE="$CACHE/go-build" KUBE_VERBOSE=0
export KUBE_GIT_VERSION="v$(sed -n 's/^Version: \([0-9.]*\).*/\1/p' "$SRC"/*.dsc | head -n1 | sed 's/+.*//')"

step "generate the OpenAPI definitions (make gen_openapi)"
(cd "$tree" && run make gen_openapi)

step "build kube-apiserver and kubectl (about 3 minutes on 2 cores)"
(cd "$tree" && run make WHAT="cmd/kube-apiserver cmd/kubectl")
for b in kube-apiserver kubectl; do
  f=$(find "$tree/_output" -type f -name "$b" -perm -u+x | head -n1)
  [[ -n "$f" ]] || fail "make finished but no $b binary under $tree/_output"
  install_bin "$f" "$b"
done

step "clean up the sources (the binaries stay)"
rm -rf "$SRC" "$CACHE/go-build"
echo "[kube-apiserver build] built in $(( $(date +%s) - started )) s: $("$BIN/kube-apiserver" --version), $BIN" >&2
