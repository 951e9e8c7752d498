#!/usr/bin/env bash
# evalhost's benchmark: one command, markdown on stdout (progress on stderr).
#
#   bench/run.sh                 # full: suites of 10, 100, 1000, 5000, 10000 cases, grading, peers
#   bench/run.sh --quick         # smoke: 10 and 100 cases, fewer calls, 1 repeat, no peers
#   bench/run.sh --sizes "100 1000" --repeats 5 --no-peers
#   bench/run.sh --no-build ...  # use the release binaries already in target/release
#                                # (or $CARGO_TARGET_DIR/release)
#   bench/run.sh --no-agents ... # without the real-agent suites (step 6)
#   bench/run.sh --no-entry-cost # without a grader entry's cost in a suite (step 7)
#
# What it does (docs/performance.md explains every number):
#   1. builds target/release/evalhost and target/release/evalhost-bench;
#   2. generates replay suites (bench/src/suite.rs) into a temp dir;
#   3. times `evalhost run --jobs 2` on each (median wall of --repeats, peak RSS), a warm
#      start of one case, a first-ever run with an empty component cache, and the largest
#      suite once with `--junit` and `--html`;
#      the history's costs (history.sh: recording vs --no-history, a 100-run store, compare
#      and every `evalhost view` page);
#   4. grading: built-in graders through the WASM host vs natively, per kind and for the
#      1,000-case suite, plus the Python and JavaScript example graders;
#   5. peers: installs promptfoo and inspect_ai into bench/.peers/ (peers/install.sh) and
#      runs the same 1,000 cases x 5 checks with 2 workers, median of --repeats;
#   6. real-agent suites (bench/agents.sh): 16 Codex cases and 16 pi cases at several
#      --jobs and the default, wall time and peak memory; when the agents are installed,
#      not under --quick;
#   7. a grader entry in a suite (bench/entry-cost.sh): 1,000 cases with one, five built-in
#      and five Python entries a case, CPU per extra entry against `grader_call session`;
#      not under --quick.
set -euo pipefail

sizes="10 100 1000 5000 10000"
repeats=3
calls=2000
peers=1
agents=1
entry_cost=1
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) sizes="10 100"; repeats=1; calls=200; peers=0; agents=0; entry_cost=0 ;;
    --sizes) sizes="$2"; shift ;;
    --repeats) repeats="$2"; shift ;;
    --calls) calls="$2"; shift ;;
    --no-peers) peers=0 ;;
    --no-agents) agents=0 ;;
    --no-entry-cost) entry_cost=0 ;;
    --no-build) build=0 ;;
    *) echo "usage: bench/run.sh [--quick] [--sizes \"10 100\"] [--repeats N] [--calls N] [--no-peers] [--no-agents] [--no-entry-cost] [--no-build]" >&2; exit 2 ;;
  esac
  shift
done

bench="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$bench")"
cd "$root"
# shellcheck source=bench/lib.sh
. "$bench/lib.sh"

if [ "$build" = 1 ]; then
  say "building release binaries"
  (cd "$root" && cargo build --release --quiet -p evalhost -p evalhost-bench)
fi
target="${CARGO_TARGET_DIR:-$root/target}"  # where cargo puts the binaries
evalhost="$target/release/evalhost"
tool="$target/release/evalhost-bench"

work="$(mktemp -d "${TMPDIR:-/tmp}/evalhost-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Every run below is recorded, as a user's would be, into a store of its own (not the
# project's .evalhost/); history.sh measures recording against --no-history.
export EVALHOST_HISTORY="$work/bench-history.db"


echo "## evalhost benchmark"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"\
  "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load before: $(cut -d' ' -f1-3 /proc/loadavg);"\
  "$("$evalhost" --version 2>/dev/null || echo evalhost)"
echo

declare -A dirs
for n in $sizes; do
  say "generating $n cases"
  dirs[$n]="$("$tool" gen "$work/suite-$n" --cases "$n" | tr '\n' ' ')"
done

# The first-ever run compiles the built-in component once; every later run loads it.
# A glob, not `ls | head -1`: with 1,000 files ls is killed by SIGPIPE, which pipefail turns
# into exit 141.
cases_of_first=("${dirs[$(echo "$sizes" | cut -d' ' -f1)]%% *}"/*.yaml)
first="${cases_of_first[0]}"
say "first-ever run (empty component cache) and warm start"
repeats_saved="$repeats"; repeats=1
XDG_CACHE_HOME="$work/empty-cache" measure cold "$evalhost" run --jobs 2 "$first"
cold="$wall"
repeats=$(( repeats_saved > 5 ? repeats_saved : 5 ))
measure warm "$evalhost" run --jobs 2 "$first"
warm="$wall"; warm_rss="$rss_mb"
repeats="$repeats_saved"

echo "### evalhost run, replay, --jobs 2 (median of $repeats)"
echo
echo "| cases | graders | wall s | cases/s | peak RSS MB |"
echo "|--:|--:|--:|--:|--:|"
declare -A cps
for n in $sizes; do
  say "evalhost run: $n cases"
  # shellcheck disable=SC2086
  measure "run-$n" "$evalhost" run --jobs 2 ${dirs[$n]}
  cps[$n]="$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.0f", n / (w > 0 ? w : 0.001) }')"
  echo "| $n | $((n * 5)) | $wall | ${cps[$n]} | $rss_mb |"
  eval "wall_$n=$wall rss_$n=$rss_mb"
done
echo
if [ -n "${dirs[1000]:-}" ]; then
  # Two settings of the run, on the 1,000-case suite: the default --jobs (four per core), and
  # temp roots on the disk's temp directory instead of the default (a fit /dev/shm).
  say "evalhost run: 1000 cases, default --jobs"
  # shellcheck disable=SC2086
  measure run-default "$evalhost" run ${dirs[1000]}
  echo "Default \`--jobs\` ($(( 4 * $(nproc) )) here), 1000 cases: $wall s wall, $(awk -v w="$wall" 'BEGIN { printf "%.0f", 1000 / (w > 0 ? w : 0.001) }') cases/s, $rss_mb MB peak RSS."
  say "evalhost run: 1000 cases, --jobs 2, TMPDIR=/tmp"
  # shellcheck disable=SC2086
  TMPDIR=/tmp measure run-tmp "$evalhost" run --jobs 2 ${dirs[1000]}
  echo "\`--jobs 2\` with \`TMPDIR=/tmp\` (temp roots on $(df --output=fstype /tmp | tail -1)), 1000 cases: $wall s wall."
  echo
fi
largest="${sizes##* }"
if [ "$largest" -ge 1000 ]; then
  # The report files on the largest suite, once: JUnit and the HTML page (every run's
  # transcript and workspace changes) are written a case at a time from their spools, so the
  # run's memory should not grow with them.
  say "evalhost run: $largest cases, --junit and --html"
  repeats_saved="$repeats"; repeats=1
  # shellcheck disable=SC2086
  measure run-reports "$evalhost" run --jobs 2 --junit "$work/junit.xml" --html "$work/report.html" ${dirs[$largest]}
  repeats="$repeats_saved"
  echo "With \`--junit\` and \`--html\`, $largest cases: $wall s wall, $rss_mb MB peak RSS (the page: $(du -m "$work/report.html" | cut -f1) MB)."
  rm -f "$work/junit.xml" "$work/report.html"
  # Every run exported as an OpenTelemetry trace (docs/traces.md): its session log parsed again
  # and its spans encoded on its grading thread, the lines spooled until the suite ends.
  say "evalhost run: $largest cases, --otel-file"
  repeats_saved="$repeats"; repeats=1
  # shellcheck disable=SC2086
  measure run-otel "$evalhost" run --jobs 2 --otel-file "$work/traces.jsonl" ${dirs[$largest]}
  repeats="$repeats_saved"
  echo "With \`--otel-file\`, $largest cases: $wall s wall, $rss_mb MB peak RSS (the file: $(du -m "$work/traces.jsonl" | cut -f1) MB)."
  rm -f "$work/traces.jsonl"
fi
if [ "$largest" -ge 1000 ]; then
  hist_dirs="${dirs[$largest]}"
  # shellcheck source=bench/history.sh
  . "$bench/history.sh"
fi
echo "Warm start, one case: ${warm} s wall, ${warm_rss} MB peak RSS (median of 5)."
echo "First-ever run, one case, empty component cache (compiles the built-in component): ${cold} s."
echo

# Grading, WASM vs native, on the evidence of the largest suite up to 1,000 cases.
grade_n=""
for n in $sizes; do [ "$n" -le 1000 ] && grade_n="$n"; done
if [ -n "$grade_n" ]; then
  say "evidence of the $grade_n-case suite (--out) and grading comparison"
  # shellcheck disable=SC2086
  "$evalhost" run --jobs 2 --out "$work/out-$grade_n" ${dirs[$grade_n]} >/dev/null
  components=()
  for example in "python/no-todo-comments#no_todo_comments" "js/polite-refusal#polite_refusal"; do
    dir="graders/examples/${example%%#*}"
    if [ ! -f "$dir/grader.wasm" ]; then
      say "building $dir/grader.wasm"
      "$dir/build.sh" >&2 || { say "could not build $dir (skipped)"; continue; }
    fi
    components+=(--component "$dir/grader.wasm#${example##*#}")
  done
  run_wall="$(eval echo "\$wall_$grade_n")"
  # shellcheck disable=SC2086
  "$tool" grading --out "$work/out-$grade_n" --calls "$calls" --rounds "$repeats" \
    --run-wall "$run_wall" --jobs 2 "${components[@]}" ${dirs[$grade_n]}
  echo
fi

if [ "$peers" = 1 ] && [ -n "${dirs[1000]:-}" ]; then
  say "installing peers"
  "$bench/peers/install.sh"
  export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR="$work/promptfoo-home"
  say "promptfoo: 1000 cases"
  measure promptfoo "$bench/.peers/promptfoo/node_modules/.bin/promptfoo" eval \
    -c "$work/suite-1000/promptfoo/promptfooconfig.yaml" -j 2 --no-cache --no-table --no-progress-bar --no-write
  pf_wall="$wall"; pf_rss="$rss_mb"
  grep -E 'passed|failed|errors' "$work/promptfoo.out" | sed 's/^/bench: promptfoo: /' >&2 || true
  say "inspect_ai: 1000 cases"
  cd "$bench/peers"  # inspect wants the task file as a relative path
  measure inspect "$bench/.peers/inspect/bin/inspect" eval inspect_task.py \
    -T samples="$work/suite-1000/inspect/samples.jsonl" --max-samples 2 --max-connections 2 \
    --display none --no-log-samples --log-dir "$work/inspect-logs"
  in_wall="$wall"; in_rss="$rss_mb"
  "$bench/.peers/inspect/bin/inspect" log dump "$(ls -t "$work"/inspect-logs/*.eval | head -1)" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("bench: inspect_ai:", d["status"], d["results"]["completed_samples"], "samples, accuracy",
      {s["name"]: s["metrics"]["accuracy"]["value"] for s in d["results"]["scores"]})' >&2 || true
  cd "$root"
  # Start-up alone: the CLI with nothing to do.
  repeats_saved="$repeats"; repeats=3
  measure pf-start "$bench/.peers/promptfoo/node_modules/.bin/promptfoo" --version
  pf_start="$wall"
  measure in-start "$bench/.peers/inspect/bin/inspect" --version
  in_start="$wall"
  repeats="$repeats_saved"

  echo "### Against peers: the same 1,000 cases x 5 checks, 2 workers (median of $repeats)"
  echo
  echo "| tool | wall s | cases/s | peak RSS MB | start-up s | evalhost cases/s ÷ tool's |"
  echo "|---|--:|--:|--:|--:|--:|"
  row() { awk -v t="$1" -v w="$2" -v r="$3" -v s="$4" -v e="${cps[1000]}" \
    'BEGIN { c = 1000 / w; printf "| %s | %.2f | %.0f | %s | %s | %.1f× |\n", t, w, c, r, s, e / c }'; }
  row "evalhost $("$evalhost" --version 2>/dev/null | awk '{ print $2 }')" "$wall_1000" "$rss_1000" "$warm"
  row "promptfoo $(cat "$bench/.peers/promptfoo/.installed")" "$pf_wall" "$pf_rss" "$pf_start"
  row "inspect_ai $(cat "$bench/.peers/inspect/.installed")" "$in_wall" "$in_rss" "$in_start"
  echo
  echo "evalhost runs the agent loop, the scripted model over HTTP, the tools and a workspace per case;"
  echo "the peers only check the recorded outcome (echo / mock model)."
fi

# Real-agent suites: 16 Codex and 16 pi cases through the real agents (bench/agents.sh skips
# a preset whose agent is missing, with a note).
if [ "$agents" = 0 ]; then
  say "real-agent suites skipped (--quick or --no-agents)"
elif command -v codex >/dev/null || command -v pi >/dev/null; then
  echo
  EVALHOST="$evalhost" "$bench/agents.sh" --no-build --repeats "$repeats"
else
  say "real-agent suites skipped: neither codex nor pi is installed"
  echo
  echo "Real-agent suites: skipped (neither \`codex\` nor \`pi\` installed; bench/agents.sh)."
fi

# A grader entry in a suite: what an entry costs beside its call (issue 40).
if [ "$entry_cost" = 1 ]; then
  echo
  "$bench/entry-cost.sh" --no-build --repeats "$(( repeats > 10 ? repeats : 10 ))"
else
  say "a grader entry's cost in a suite skipped (--quick or --no-entry-cost)"
fi
