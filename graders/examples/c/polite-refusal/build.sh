#!/usr/bin/env bash
# Builds grader.wasm beside this script: wit-bindgen generates the C bindings from
# wit/grader.wit, clang compiles for wasm32-wasi with Debian's wasi-libc and links with lld,
# and wasm-tools turns the core module into a component.
#   apt-get install clang lld wasi-libc libclang-rt-dev-wasm32
#   cargo install wit-bindgen-cli@0.63.0 wasm-tools@1.263.0
# A grader that calls WASI itself (files under /workspace, stdio) imports
# wasi_snapshot_preview1: set WASI_ADAPTER to a wasi_snapshot_preview1.reactor.wasm adapter
# (shipped with wasmtime releases and in the @bytecodealliance/jco npm package).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
wit-bindgen c wit --world grader --out-dir build >/dev/null
clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -O2 -Wall -Wextra -Werror \
  -Ibuild -o build/grader.core.wasm \
  grader.c build/grader.c build/grader_component_type.o
adapt=()
if [ -n "${WASI_ADAPTER:-}" ]; then
  adapt=(--adapt "wasi_snapshot_preview1=$WASI_ADAPTER")
fi
wasm-tools component new build/grader.core.wasm "${adapt[@]}" -o grader.wasm
echo "built $(pwd)/grader.wasm"
