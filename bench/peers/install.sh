#!/usr/bin/env bash
# Installs the peers evalhost is compared with into bench/.peers/ (git-ignored):
# promptfoo from npm and inspect_ai from PyPI into a venv, at the versions the issue measured.
# Idempotent: a peer already installed at its pinned version is left alone.
# Only bench/run.sh calls this; tests never install anything.
set -euo pipefail
PROMPTFOO_VERSION=0.121.20
INSPECT_AI_VERSION=0.3.285
peers="$(cd "$(dirname "$0")/.." && pwd)/.peers"
mkdir -p "$peers"

if [ "$(cat "$peers/promptfoo/.installed" 2>/dev/null)" != "$PROMPTFOO_VERSION" ]; then
  echo "installing promptfoo $PROMPTFOO_VERSION into $peers/promptfoo" >&2
  mkdir -p "$peers/promptfoo"
  (cd "$peers/promptfoo" && [ -f package.json ] || echo '{"private":true}' > package.json)
  npm install --prefix "$peers/promptfoo" --no-audit --no-fund --loglevel=error \
    "promptfoo@$PROMPTFOO_VERSION" >&2
  echo "$PROMPTFOO_VERSION" > "$peers/promptfoo/.installed"
fi

if [ "$(cat "$peers/inspect/.installed" 2>/dev/null)" != "$INSPECT_AI_VERSION" ]; then
  echo "installing inspect_ai $INSPECT_AI_VERSION into $peers/inspect" >&2
  python3 -m venv "$peers/inspect"
  "$peers/inspect/bin/pip" install --quiet --disable-pip-version-check \
    "inspect_ai==$INSPECT_AI_VERSION" >&2
  echo "$INSPECT_AI_VERSION" > "$peers/inspect/.installed"
fi
