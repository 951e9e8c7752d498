#!/usr/bin/env bash
# Builds grader.wasm beside this script with componentize-py
# (pip install componentize-py==0.25.1).
set -euo pipefail
cd "$(dirname "$0")"
PYTHONDONTWRITEBYTECODE=1 componentize-py -d wit -w grader componentize app -o grader.wasm
rm -rf __pycache__  # left by the build's Python, not part of the grader
echo "built $(pwd)/grader.wasm"
