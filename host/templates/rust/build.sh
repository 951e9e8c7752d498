#!/usr/bin/env bash
# Builds grader.wasm beside this script with cargo (needs: rustup target add wasm32-wasip2).
# A cdylib built for wasm32-wasip2 is already a component: no other tool is needed.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --target wasm32-wasip2
target_dir="${CARGO_TARGET_DIR:-target}"
cp "$target_dir/wasm32-wasip2/release/{{crate}}.wasm" grader.wasm
echo "built $(pwd)/grader.wasm"
