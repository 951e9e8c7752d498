#!/usr/bin/env bash
# Wall time and peak memory per AgentCompany fixture: evalhost's own replay vs
# `--agent pi-agent-core` (the fixture's turns through pi-agent-core's Agent loop in Node).
# Markdown on stdout, progress on stderr (docs/performance.md, "AgentCompany through
# pi-agent-core").
#
#   bench/pi-agent-core.sh                      # cases/agentcompany, median of 5
#   bench/pi-agent-core.sh --repeats 9 DIR      # another fixtures directory
#   bench/pi-agent-core.sh --evalhost PATH      # another binary (default: the release build,
#                                               # $CARGO_TARGET_DIR/release or target/release)
#
# Needs the adapter installed: npm ci --prefix agents/pi-agent-core
set -euo pipefail

repeats=5
root="$(cd "$(dirname "$0")/.." && pwd)"
evalhost="${CARGO_TARGET_DIR:-$root/target}/release/evalhost"
dir="cases/agentcompany"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift ;;
    --evalhost) evalhost="$2"; shift ;;
    -*) echo "usage: bench/pi-agent-core.sh [--repeats N] [--evalhost PATH] [DIR]" >&2; exit 2 ;;
    *) dir="$1" ;;
  esac
  shift
done
cd "$root"
[ -x "$evalhost" ] || { echo "no evalhost binary at $evalhost (cargo build --release, or --evalhost PATH)" >&2; exit 2; }

# measure ARGS...: `evalhost run ARGS` --repeats times; prints "MEDIAN_WALL_S PEAK_RSS_MB" (peak
# RSS: the largest of the runs; of evalhost or, when larger, of the agent it started).
measure() {
  local walls=() rss=0 out i
  for i in $(seq "$repeats"); do
    out="$( { /usr/bin/time -f '%e %M' "$evalhost" -q run "$@" >/dev/null; } 2>&1 | tail -1 || true)"
    walls+=("${out% *}")
    [ "${out#* }" -gt "$rss" ] && rss="${out#* }"
  done
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (repeats + 1) / 2 ))p")" "$((rss / 1024))"
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg); $("$evalhost" --version); node $(node --version)"
echo
echo "| fixture | own replay: wall s | peak RSS MB | pi-agent-core: wall s | peak RSS MB |"
echo "|---|--:|--:|--:|--:|"
for fixture in "$dir"/*.jsonl; do
  echo "bench: $fixture" >&2
  read -r own own_rss < <(measure "$fixture")
  read -r pi pi_rss < <(measure --agent pi-agent-core "$fixture")
  echo "| $(basename "$fixture" .jsonl) | $own | $own_rss | $pi | $pi_rss |"
done
echo "bench: the whole directory" >&2
read -r own own_rss < <(measure "$dir")
read -r pi pi_rss < <(measure --agent pi-agent-core "$dir")
echo "| all of $dir | $own | $own_rss | $pi | $pi_rss |"
