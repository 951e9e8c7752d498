#!/usr/bin/env bash
# Real-agent suites (docs/performance.md, "Real-agent suites (issue 40)"): a 16-case suite per
# preset (the 4 shipped cases of cases/agents/PRESET, each 4 times under its own name, graders
# kept) run by `evalhost run --jobs J` for each J and once with the default, reporting the
# median wall time, cases/s, evalhost's own peak RSS and the suite's total peak memory
# (evalhost and every agent process it started). Every case must pass, or the script fails.
# Markdown on stdout, progress on stderr.
#
#   bench/agents.sh                              # build target/release/evalhost, codex and pi,
#                                                # --jobs 1 2 4 8 16 and the default, 3 repeats
#   bench/agents.sh --no-build --repeats 5
#   bench/agents.sh --no-build --presets pi --jobs "2 4" --cases 32
#   EVALHOST=path/to/evalhost bench/agents.sh --no-build
#
# The suite's total peak memory is memory.peak of a cgroup v2 made for each run (as root, on a
# kernel whose cgroup v2 has the memory controller); otherwise the peak of the process tree's
# summed PSS, sampled every 0.2 s by bench/tree_memory.py. The output says which. A preset
# whose agent is not installed (on PATH, or EVALHOST_AGENT_<NAME>) is skipped with a note.
set -euo pipefail

repeats=3
build=1
presets="codex pi"
jobs_list="1 2 4 8 16"
cases=16
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift ;;
    --no-build) build=0 ;;
    --presets) presets="$2"; shift ;;
    --jobs) jobs_list="$2"; shift ;;
    --cases) cases="$2"; shift ;;
    *) echo "usage: bench/agents.sh [--no-build] [--repeats N] [--presets \"codex pi\"] [--jobs \"1 2 4\"] [--cases N]" >&2; exit 2 ;;
  esac
  shift
done

bench="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$bench")"
target="${CARGO_TARGET_DIR:-$root/target}"
if [ "$build" = 1 ]; then
  echo "bench: building release evalhost" >&2
  cargo build --release -q -p evalhost --manifest-path "$root/Cargo.toml" >&2
fi
evalhost="${EVALHOST:-$target/release/evalhost}"
[ -x "$evalhost" ] || { echo "no evalhost binary at $evalhost (build it, or set EVALHOST)" >&2; exit 2; }
# shellcheck source=bench/lib.sh
. "$bench/lib.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/evalhost-agents.XXXXXX")"
cgroups=()
cleanup() {
  local cg
  for cg in "${cgroups[@]}"; do rmdir "$cg" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
# Recorded into a store of the bench's own, as a user's run would be (not the project's).
export EVALHOST_HISTORY="$work/history.db"

# A cgroup v2 with the memory controller beneath this shell's own, if one can be made.
cgroup_parent=""
cg2="$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)"
own="$(sed -n 's/^0:://p' /proc/self/cgroup)"
if [ -n "$cg2" ] && [ -n "$own" ] && [ -w "$cg2$own" ]; then
  probe="$cg2$own/evalhost-bench-probe.$$"
  if mkdir "$probe" 2>/dev/null; then
    [ -f "$probe/memory.peak" ] || echo +memory >"$cg2$own/cgroup.subtree_control" 2>/dev/null || true
    [ -f "$probe/memory.peak" ] && cgroup_parent="$cg2$own"
    rmdir "$probe" 2>/dev/null || true
  fi
fi
if [ -n "$cgroup_parent" ]; then
  memory_method="memory.peak of a cgroup v2 made for each run (every process of the run, page cache included)"
else
  memory_method="peak of the summed PSS of evalhost's process tree, sampled every 0.2 s (no writable cgroup v2 with the memory controller here)"
fi

# program PRESET: the agent's program on PATH.
program() {
  case "$1" in
    claude-code) echo claude ;;
    mini-swe-agent) echo mini ;;
    gemini-cli) echo gemini ;;
    *) echo "$1" ;;
  esac
}
# agent PRESET: EVALHOST_AGENT_<NAME> when set, else the program's name.
agent() {
  local var
  var="EVALHOST_AGENT_$(echo "$1" | tr 'a-z-' 'A-Z_')"
  echo "${!var:-$(program "$1")}"
}
installed() { command -v "$(agent "$1")" >/dev/null; }


# Each setting's results so far, by "PRESET JOBS": wall and CPU seconds of every repeat, the
# largest memory figures, the concurrency the run used.
declare -A walls cpus own total procs chosen

# run_once PRESET JOBS: `evalhost run [--jobs JOBS] SUITE` once ("default": no --jobs), its
# results added to the setting's; fails loudly unless every case passed.
run_once() {
  local preset="$1" jobs="$2" key="$1 $2" args=() start end cg="" pid sampler sampled
  local pss _rss n hwm seconds
  [ "$jobs" = default ] || args=(--jobs "$jobs")
  if [ -n "$cgroup_parent" ]; then
    cg="$cgroup_parent/evalhost-bench.$$.$preset.$jobs"
    mkdir "$cg"; cgroups+=("$cg")
  fi
  start="$(date +%s.%N)"
  sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
    "$evalhost" -q run "${args[@]}" "$work/$preset" >"$work/out" 2>"$work/err" &
  pid=$!
  python3 "$bench/tree_memory.py" "$pid" 0.2 >"$work/sampled" &
  sampler=$!
  if ! wait "$pid"; then
    say "$preset --jobs $jobs failed (a case did not pass, or the run errored); its output:"
    tail -n 30 "$work/out" "$work/err" >&2
    exit 1
  fi
  end="$(date +%s.%N)"
  wait "$sampler"
  read -r pss _rss n hwm seconds <"$work/sampled"
  if [ -n "$cg" ]; then
    sampled="$(( $(cat "$cg/memory.peak") / 1024 ))"
    rmdir "$cg" 2>/dev/null || true
  else
    sampled="$pss"
  fi
  walls[$key]="${walls[$key]:-} $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')"
  cpus[$key]="${cpus[$key]:-} $seconds"
  [ "$hwm" -gt "${own[$key]:-0}" ] && own[$key]="$hwm"
  [ "$sampled" -gt "${total[$key]:-0}" ] && total[$key]="$sampled"
  [ "$n" -gt "${procs[$key]:-0}" ] && procs[$key]="$n"
  # The plan's note names the concurrency of a suite of external agents left at its default.
  chosen[$key]="$(sed -n 's/^Jobs: \([0-9]*\) .*/\1/p' "$work/out" | head -1)"
}

# row PRESET JOBS: the setting's line of the table (wall: the median, and the range).
row() {
  local key="$1 $2" label="$2" list cpu_list
  read -ra list <<<"${walls[$key]}"
  read -ra cpu_list <<<"${cpus[$key]}"
  [ "$2" = default ] && label="default (${chosen[$key]:-?})"
  awk -v p="$1" -v j="$label" -v w="$(median "${list[@]}")" \
    -v range="$(printf '%s\n' "${list[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)" \
    -v n="$cases" -v c="$(median "${cpu_list[@]}")" -v o="$(( ${own[$key]} / 1024 ))" \
    -v t="$(( ${total[$key]} / 1024 ))" -v k="${procs[$key]}" \
    'BEGIN { printf "| %s | %s | %.2f | %s | %.1f | %.1f | %s | %s | %s |\n", p, j, w, range, n / (w > 0 ? w : 0.01), c, o, t, k }'
}

versions=""
for preset in $presets; do
  if installed "$preset"; then
    versions="$versions; $preset $( { "$(agent "$preset")" --version 2>&1 || true; } | tail -1)"
  fi
done
echo "### Real-agent suites: $cases cases a preset, \`evalhost run --jobs J\` (median of $repeats)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo);"\
  "load before: $(cut -d' ' -f1-3 /proc/loadavg); $("$evalhost" --version)$versions."
echo "Total peak memory: $memory_method. CPU s: user + system of evalhost and every process"
echo "under it, each as last sampled every 0.2 s (a lower bound: bubblewrap hands no child's CPU to /usr/bin/time)."
echo
echo "| agent | --jobs | wall s | range s | cases/s | CPU s | evalhost peak RSS MB | total peak MB | processes at peak |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
for preset in $presets; do
  if ! installed "$preset"; then
    say "$preset is not installed: skipped"
    echo "| $preset | — | not installed: skipped | | | | | | |"
    continue
  fi
  shipped=("$root/cases/agents/$preset"/*.yaml)
  mkdir -p "$work/$preset"
  for i in $(seq "$cases"); do
    source="${shipped[$(( (i - 1) % ${#shipped[@]} ))]}"
    copy="$(( (i - 1) / ${#shipped[@]} + 1 ))"
    sed -e "s/^name: \"\(.*\)\"\$/name: \"\1-$copy\"/; t" -e "s/^name: \(.*\)\$/name: \1-$copy/" \
      "$source" >"$work/$preset/$(basename "$source" .yaml)-$copy.yaml"
  done
  # Round robin over the settings, repeat after repeat: a load that drifts while the bench
  # runs falls on every setting alike.
  for i in $(seq "$repeats"); do
    for jobs in $jobs_list default; do
      say "$preset: $cases cases, --jobs $jobs (repeat $i of $repeats)"
      run_once "$preset" "$jobs"
    done
  done
  for jobs in $jobs_list default; do
    row "$preset" "$jobs"
  done
done
echo
echo "Load after: $(cut -d' ' -f1-3 /proc/loadavg)."
