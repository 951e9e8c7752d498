#!/usr/bin/env bash
# Builds grader.wasm beside this script with componentize-py
# (pip install componentize-py==0.25.1).
set -euo pipefail
cd "$(dirname "$0")"
componentize-py -d wit -w grader componentize app -o grader.wasm
echo "built $(pwd)/grader.wasm"
