#!/usr/bin/env bash
# Builds and runs the example projects against the installed election-policy artifacts, the way a user's
# project would use them. Run "mvn -B install" at the repository root first; the README's test command does.
set -euo pipefail
cd "$(dirname "$0")"

bash downstream-ci/run.sh
bash quickstart/run.sh
bash runtime-classpath/run.sh
bash demo/run.sh
