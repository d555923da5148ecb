#!/usr/bin/env bash
# Builds the downstream example against the installed election-policy artifacts, the way a user's CI would:
# first the correctly wired toy controller must pass the wiring contract, then a deliberately mis-wired
# start-up must fail it, naming the row of the truth table. Run "mvn -B install" at the repository root first.
set -euo pipefail
cd "$(dirname "$0")"

# jqwik replays failed samples from its database first; each run here starts without them.
fresh_jqwik_database() { rm -rf target/jqwik-database; }

echo "downstream-ci: correct wiring must pass the election wiring contract"
fresh_jqwik_database
mvn -B -q verify

echo "downstream-ci: a mis-wired start-up (hard-coded substrate flag) must fail it"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
fresh_jqwik_database
if mvn -B -q verify -Dexample.miswired=true >"$log" 2>&1; then
  cat "$log"
  echo "downstream-ci: FAILED: the contract passed a mis-wired controller" >&2
  exit 1
fi
if ! grep -Eq "row [1-8] of the truth table" "$log" target/surefire-reports/*.txt; then
  cat "$log"
  echo "downstream-ci: FAILED: the build failed, but not with a truth-table failure naming a row" >&2
  exit 1
fi
grep -Eho "election wiring [^\"]*row [1-8] of the truth table[^\"]*" target/surefire-reports/*.txt | sort -u | sed 's/^/  caught: /'
fresh_jqwik_database
echo "downstream-ci: passed (correct wiring passed, mis-wired start-up was caught)"
