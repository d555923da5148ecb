#!/usr/bin/env bash
# Runs the README's demo command ("Run the demo") as a new user would, after the install the README's test
# command has just made, and checks that it printed its result line: the demo must keep working when copied.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! mvn -B -q -pl election-examples exec:java >"$out" 2>&1; then
  cat "$out"
  echo "demo: the README's demo command failed" >&2
  exit 1
fi
result=$(grep -E '^result: graceful take-over [0-9]+ ms, crash take-over [0-9]+ ms$' "$out" || true)
if [[ -z "$result" ]]; then
  cat "$out"
  echo "demo: no result line (expected 'result: graceful take-over N ms, crash take-over N ms')" >&2
  exit 1
fi
echo "demo (the README's command): passed; $result"
