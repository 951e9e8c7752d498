#!/usr/bin/env bash
# Builds grader.wasm beside this script with componentize-js
# (npm install @bytecodealliance/componentize-js@0.23.0; `componentize-js` on PATH or in
# node_modules/.bin). `-d http -d fetch-event` keeps wasi:http out of the imports: the
# grader sandbox grants no network.
set -euo pipefail
cd "$(dirname "$0")"
componentize=componentize-js
if ! command -v "$componentize" >/dev/null && [ -x node_modules/.bin/componentize-js ]; then
  componentize=node_modules/.bin/componentize-js
fi
"$componentize" --wit wit --world-name grader -d http -d fetch-event -o grader.wasm grader.js
echo "built $(pwd)/grader.wasm"
