#!/usr/bin/env bash
# What confinement costs (docs/performance.md, "Confinement"): the same replay suites run
# confined (the default: namespaces where bubblewrap works), with Landlock alone
# (EVALHOST_CONFINE_NAMESPACES=0) and with --no-confine, --jobs 1, median wall time of --repeats.
#
#   bench/confine.sh                       # build target/release/evalhost, 3 repeats
#   bench/confine.sh --no-build --repeats 5
#   EVALHOST=path/to/evalhost bench/confine.sh --no-build
#
# Two suites, each CASES cases of one run:
#   bash:  one model request with 16 `bash` calls (`true`), then a text answer: 16 spawns a run;
#   text:  one text answer, no process at all: what building a run's ruleset costs.
# Per confined bash call = (bash confined - bash unconfined - (text confined - text unconfined))
#                          / (CASES x 16).
# Markdown on stdout, progress on stderr.
set -euo pipefail

cases=50
repeats=3
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift ;;
    --repeats) repeats="$2"; shift ;;
    --no-build) build=0 ;;
    *) echo "usage: bench/confine.sh [--cases N] [--repeats N] [--no-build]" >&2; exit 2 ;;
  esac
  shift
done

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
if [ "$build" = 1 ]; then
  echo "building release evalhost..." >&2
  cargo build --release -q -p evalhost --manifest-path "$root/Cargo.toml" >&2
fi
evalhost="${EVALHOST:-$target/release/evalhost}"
[ -x "$evalhost" ] || { echo "no evalhost binary at $evalhost (build it, or set EVALHOST)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bash" "$work/text"
calls=""
for i in $(seq 1 16); do
  calls="$calls      - {tool: bash, arguments: {command: \"true\"}}
"
done
for i in $(seq -w 1 "$cases"); do
  cat > "$work/bash/bash-$i.yaml" <<EOF
name: bash-$i
prompt: Run true sixteen times.
approve: all
model:
  - calls:
$calls  - text: done
graders:
  - final_text_contains: done
EOF
  cat > "$work/text/text-$i.yaml" <<EOF
name: text-$i
prompt: Say done.
model:
  - text: done
graders:
  - final_text_contains: done
EOF
done

# Median wall time in ms of `evalhost run --jobs 1 ARGS` (with $layer_env in the environment).
layer_env=""
median_ms() {
  local times=()
  for _ in $(seq 1 "$repeats"); do
    local start end
    start=$(date +%s%N)
    env $layer_env "$evalhost" run --jobs 1 "$@" >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (repeats + 1) / 2 ))p"
}

echo "timing ($repeats repeats each)..." >&2
"$evalhost" run --jobs 1 "$work/text" >/dev/null # warm the component cache
bash_on=$(median_ms "$work/bash")
bash_off=$(median_ms --no-confine "$work/bash")
text_on=$(median_ms "$work/text")
text_off=$(median_ms --no-confine "$work/text")
layer_env="EVALHOST_CONFINE_NAMESPACES=0"
bash_ll=$(median_ms "$work/bash")
text_ll=$(median_ms "$work/text")
layer_env=""
spawns=$((cases * 16))
per_run_us=$(( (text_on - text_off) * 1000 / cases ))
per_call_us=$(( ((bash_on - bash_off) - (text_on - text_off)) * 1000 / spawns ))
per_call_ll_us=$(( ((bash_ll - bash_off) - (text_ll - text_off)) * 1000 / spawns ))
layer=$("$evalhost" run --jobs 1 "$work/text/text-$(seq -w 1 "$cases" | head -1).yaml" 2>/dev/null | grep -o "namespaces of each run's own ([^)]*)" | head -1 || true)
abi=$("$evalhost" run --jobs 1 "$work/text/text-$(seq -w 1 "$cases" | head -1).yaml" 2>/dev/null | grep -c "Confinement missing" || true)

echo "| suite ($cases cases, --jobs 1, median of $repeats) | confined (default) | Landlock alone | --no-confine | default - none |"
echo "|---|---|---|---|---|"
echo "| bash: 16 \`bash\` calls a run ($spawns in all) | ${bash_on} ms | ${bash_ll} ms | ${bash_off} ms | $((bash_on - bash_off)) ms |"
echo "| text: no process | ${text_on} ms | ${text_ll} ms | ${text_off} ms | $((text_on - text_off)) ms |"
echo
echo "Default layer: ${layer:-Landlock (no namespaces here)}."
echo "Per run: ${per_run_us} µs. Per confined bash call: ${per_call_us} µs (Landlock alone: ${per_call_ll_us} µs)."
if [ "$abi" != 0 ]; then
  echo "(This kernel lacks some Landlock features; see the report header.)"
fi
