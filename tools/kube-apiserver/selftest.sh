#!/usr/bin/env bash
# Checks of build.sh and cluster.sh themselves (not of the library): what a machine shared by several builds,
# an interrupted build or a broken binary does to them. Each case says what it checks, then PASS or FAIL.
#
#   bash tools/kube-apiserver/selftest.sh [CASE...]     cases: restart, restart-after-clean, dead-apiserver, no-curl,
#                                                       concurrent-build, skiptests (all but skiptests by default)
#
# Needs the binaries build.sh caches (restart, dead-apiserver, no-curl use the real etcd and kubectl) and root
# (build.sh's machine check). concurrent-build runs build.sh with stand-ins for apt-get and make in a scratch
# cache, so it neither installs nor downloads anything. skiptests runs Maven (MAVEN_REPO_LOCAL, if set, is passed
# as -Dmaven.repo.local); it takes about 3 minutes.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
CACHE="${ELECTION_KUBE_CACHE:-$HOME/.cache/election-policy/kubernetes}"
work=$(mktemp -d /tmp/kube-selftest.XXXXXX)
failed=0

say() { echo "[selftest] $*"; }
pass() { say "PASS $1"; }
fail() { say "FAIL $1: $2"; failed=1; }

# Processes whose command line mentions $1 (a cluster directory); none may be left by a case.
leftovers() { pgrep -f -- "$1" || true; }
cleanup_dir() { # stops whatever a case left running in $1, by PID
  local pids; pids=$(leftovers "$1")
  [[ -n $pids ]] && kill $pids 2>/dev/null
  return 0
}

case_restart() {
  local name="restart: 'cluster.sh start DIR' twice, then 'stop DIR', leaves nothing running"
  local d=$work/restart
  bash "$here/cluster.sh" start "$d" >"$work/restart.1.log" 2>&1 || { fail "$name" "first start failed"; return; }
  bash "$here/cluster.sh" start "$d" >"$work/restart.2.log" 2>&1 || { fail "$name" "second start failed"; return; }
  bash "$here/cluster.sh" stop "$d" >/dev/null 2>&1
  sleep 1
  local left; left=$(leftovers "$d")
  if [[ -n $left ]]; then
    fail "$name" "still running after stop: $(ps -o pid=,args= -p "${left//$'\n'/,}" | cut -c1-110 | tr '\n' ';')"
    cleanup_dir "$d"
  else
    pass "$name"
  fi
}

case_restart_after_clean() {
  local name="restart-after-clean: start, DIR deleted (mvn clean), start again, stop: nothing left running"
  local d=$work/clean
  bash "$here/cluster.sh" start "$d" >"$work/clean.1.log" 2>&1 || { fail "$name" "first start failed"; return; }
  rm -rf "$d"
  bash "$here/cluster.sh" start "$d" >"$work/clean.2.log" 2>&1 || { fail "$name" "second start failed"; return; }
  bash "$here/cluster.sh" stop "$d" >/dev/null 2>&1
  sleep 1
  local left; left=$(leftovers "$d")
  if [[ -n $left ]]; then
    fail "$name" "still running after stop: $(ps -o pid=,args= -p "${left//$'\n'/,}" | cut -c1-110 | tr '\n' ';')"
    cleanup_dir "$d"
  else
    pass "$name"
  fi
}

# A cache whose kube-apiserver answers --version and exits at once otherwise (a broken build, a bad flag).
fake_cache() {
  local c=$work/fake-cache
  mkdir -p "$c/bin"
  ln -sf "$CACHE/bin/etcd" "$c/bin/etcd"; ln -sf "$CACHE/bin/kubectl" "$c/bin/kubectl"
  printf '#!/bin/sh\n[ "$1" = --version ] && { echo "Kubernetes v1.20.2"; exit 0; }\necho "Error: unknown flag: --bogus" >&2\nexit 1\n' \
    >"$c/bin/kube-apiserver"
  chmod +x "$c/bin/kube-apiserver"
  echo "$c"
}

case_dead_apiserver() {
  local name="dead-apiserver: a kube-apiserver that exits at once fails start within 20 s, says so, leaves no etcd"
  local d=$work/dead c; c=$(fake_cache)
  local t0=$SECONDS out
  out=$(ELECTION_KUBE_CACHE=$c bash "$here/cluster.sh" start "$d" 2>&1) && { fail "$name" "start succeeded"; return; }
  local took=$(( SECONDS - t0 )) left; sleep 1; left=$(leftovers "$d")
  if (( took > 20 )); then
    fail "$name" "took ${took} s; said: $(tail -n1 <<<"$out")"
  elif ! grep -q 'unknown flag: --bogus' <<<"$out"; then
    fail "$name" "the message does not show why it exited: $(tail -n1 <<<"$out")"
  elif [[ -n $left ]]; then
    fail "$name" "left running: $(ps -o args= -p "${left//$'\n'/,}" | cut -c1-80)"
  else
    pass "$name"
  fi
  cleanup_dir "$d"
}

case_no_curl() {
  local name="no-curl: without curl, start fails within 10 s naming curl"
  local d=$work/nocurl sandbox=$work/path-without-curl
  mkdir -p "$sandbox"
  local dir f
  IFS=: read -ra dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do
    for f in "$dir"/*; do
      [[ -x $f && ! -d $f && $(basename "$f") != curl && ! -e $sandbox/$(basename "$f") ]] && ln -s "$f" "$sandbox/"
    done
  done
  local t0=$SECONDS out
  out=$(PATH=$sandbox bash "$here/cluster.sh" start "$d" 2>&1) && { fail "$name" "start succeeded"; return; }
  local took=$(( SECONDS - t0 ))
  if (( took > 10 )) || ! grep -q curl <<<"$out"; then
    fail "$name" "took ${took} s and said: $(tail -n1 <<<"$out")"
  else
    pass "$name"
  fi
  cleanup_dir "$d"
}

case_concurrent_build() {
  local name="concurrent-build: two first builds into one cache at once both succeed"
  local stub=$work/stub c=$work/race-cache
  mkdir -p "$stub"
  cat >"$stub/apt-get" <<'EOF'
#!/bin/sh
# Stand-in for apt-get: no network, no change to the machine; "source" leaves a tree shaped like Kubernetes'.
case "$1" in
  update|install) sleep 1 ;;
  source) sleep 1
    mkdir -p kubernetes-1.20.2/cmd/kube-apiserver kubernetes-1.20.2/vendor/github.com/modern-go/reflect2
    touch kubernetes-1.20.2/cmd/kube-apiserver/apiserver.go
    echo "Version: 1.20.2+dfsg-1" >kubernetes_1.20.2+dfsg-1.dsc ;;
esac
EOF
  cat >"$stub/make" <<'EOF'
#!/bin/sh
# Stand-in for Kubernetes' make: a few seconds, then two small binaries.
sleep 3
case "$*" in *WHAT=*)
  mkdir -p _output/bin
  for b in kube-apiserver kubectl; do printf '#!/bin/sh\necho Kubernetes v1.20.2\n' >_output/bin/$b; chmod +x _output/bin/$b; done ;;
esac
EOF
  chmod +x "$stub"/*
  local i pids=()
  for i in 1 2; do
    PATH=$stub:$PATH ELECTION_KUBE_CACHE=$c bash "$here/build.sh" >"$work/build.$i.log" 2>&1 &
    pids+=($!)
  done
  local status=0
  for i in 0 1; do wait "${pids[$i]}" || status=$((status + 1)); done
  if (( status > 0 )) || [[ ! -x $c/bin/kube-apiserver || ! -x $c/bin/kubectl || ! -x $c/bin/etcd ]]; then
    fail "$name" "$status of 2 failed: $(tail -qn1 "$work"/build.*.log | tr '\n' ';')"
  else
    pass "$name"
  fi
}

case_skiptests() {
  local name="skiptests: 'mvn install -DskipTests' (the README demo's first command) neither builds nor starts the server"
  # An unwritable cache: build.sh, if it runs, fails at once ("cannot create ...").
  local out
  if out=$(cd "$repo" && ELECTION_KUBE_CACHE=/proc/election-selftest mvn -B -q ${MAVEN_REPO_LOCAL:+-Dmaven.repo.local=$MAVEN_REPO_LOCAL} \
      -pl election-apiserver-tests -am install -DskipTests -Djavadoc.skip -Denforcer.skip 2>&1); then
    if grep -q '\[kube-apiserver' <<<"$out"; then
      fail "$name" "it ran the scripts: $(grep '\[kube-apiserver' <<<"$out" | head -n1)"
    else
      pass "$name"
    fi
  else
    fail "$name" "the build failed: $(grep -m1 -E '\[kube-apiserver|ERROR' <<<"$out")"
  fi
  cleanup_dir "$repo/election-apiserver-tests/target/kube"
}

cases=("$@")
(( ${#cases[@]} )) || cases=(restart restart-after-clean dead-apiserver no-curl concurrent-build)
for c in "${cases[@]}"; do
  case $c in
    restart) case_restart ;;
    restart-after-clean) case_restart_after_clean ;;
    dead-apiserver) case_dead_apiserver ;;
    no-curl) case_no_curl ;;
    concurrent-build) case_concurrent_build ;;
    skiptests) case_skiptests ;;
    *) say "unknown case '$c'; accepted: restart, restart-after-clean, dead-apiserver, no-curl, concurrent-build, skiptests"; exit 2 ;;
  esac
done
rm -rf "$work"
(( failed == 0 )) && say "all passed" || say "some failed"
exit "$failed"
