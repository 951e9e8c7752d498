#!/usr/bin/env bash
# What a grader entry costs in a suite, beside what its call costs alone (issue 40;
# docs/performance.md, "A grader entry in a suite"). Markdown on stdout, progress on stderr.
#
#   bench/entry-cost.sh                  # 1,000 cases at --jobs 2, 10 alternated runs of each suite
#   bench/entry-cost.sh --repeats 20 --no-build
#   bench/entry-cost.sh --instructions   # also Valgrind's instruction counts (load-independent)
#
# Three suites of the same 1,000 generated cases (bench/src/suite.rs): one built-in entry a
# case, five built-in entries a case, and one built-in entry plus five entries of the Python
# example grader (graders/examples/python/no-todo-comments). They run alternated, so a drift of
# the machine's speed hits all three alike. Extra CPU (user + system, /usr/bin/time) per
# entry = (CPU of the larger suite − CPU of the one-entry suite) ÷ the extra entries, beside
# `grader_call session`'s p50 per built-in call (host/benches/grader_call.rs) measured in
# the same run. With --instructions, the same comparison in user-space instructions
# (`valgrind --tool=callgrind`, 100-case suites; `grader_call session` 60 rounds − 20 rounds),
# which a busy machine cannot blur.
set -euo pipefail

repeats=10
build=1
instructions=0
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats="$2"; shift ;;
    --no-build) build=0 ;;
    --instructions) instructions=1 ;;
    *) echo "usage: bench/entry-cost.sh [--repeats N] [--no-build] [--instructions]" >&2; exit 2 ;;
  esac
  shift
done
bench="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$bench")"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
evalhost="$target/release/evalhost"
tool="$target/release/evalhost-bench"
# shellcheck source=bench/lib.sh
. "$bench/lib.sh"

if [ "$build" = 1 ]; then
  say "building release binaries and the grader_call bench"
  cargo build --release --quiet -p evalhost -p evalhost-bench
fi
[ -x "$evalhost" ] && [ -x "$tool" ] || { say "no release binaries in $target/release (drop --no-build)"; exit 2; }
grader_call="$(cargo bench --quiet -p evalhost --bench grader_call --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "grader_call" and m.get("executable"):
        print(m["executable"])')"
python_grader="graders/examples/python/no-todo-comments/grader.wasm"
if [ ! -f "$python_grader" ]; then
  say "building $python_grader"
  graders/examples/python/no-todo-comments/build.sh >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/evalhost-entry-cost.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export EVALHOST_HISTORY="$work/history.db"
"$tool" gen "$work/one" --cases 1000 --checks 1 >/dev/null
"$tool" gen "$work/five" --cases 1000 --checks 5 >/dev/null
"$tool" gen "$work/python" --cases 1000 --checks 1 >/dev/null
# Five entries of the Python grader after each case's one built-in entry.
for f in "$work"/python/evalhost/part-*/*.yaml; do
  for _ in 1 2 3 4 5; do
    echo "  - $root/$python_grader#no_todo_comments: {markers: [TODO]}" >>"$f"
  done
done

cpu() { # SUITE: user + system seconds of one `evalhost run --jobs 2`
  /usr/bin/time -f '%U %S' -o "$work/time" "$evalhost" run --jobs 2 "$work/$1"/evalhost/part-* >"$work/out" 2>&1 \
    || { say "$1 failed:"; tail -20 "$work/out" >&2; exit 1; }
  awk '{ printf "%.3f\n", $1 + $2 }' "$work/time"
}
say "warm-up"
cpu one >/dev/null; cpu five >/dev/null; cpu python >/dev/null
for i in $(seq "$repeats"); do
  say "round $i of $repeats"
  for s in one five python; do cpu "$s" >>"$work/$s.cpu"; done
done
session_us="$("$grader_call" | awk '/session/ { for (i = 1; i <= NF; i++) if ($i == "per" && $(i+1) == "call") print $(i-2) }' | tail -1)"

stats() { # FILE: mean and standard error
  awk '{ s += $1; q += $1 * $1; n++ } END { m = s / n; v = (n > 1 ? (q - n * m * m) / (n - 1) : 0); if (v < 0) v = 0; printf "%.3f %.3f\n", m, sqrt(v / n) }' "$1"
}
read -r one one_se < <(stats "$work/one.cpu")
read -r five five_se < <(stats "$work/five.cpu")
read -r py py_se < <(stats "$work/python.cpu")
per() { # MEAN SE BASE BASE_SE ENTRIES: µs per entry and its standard error
  awk -v a="$1" -v sa="$2" -v b="$3" -v sb="$4" -v n="$5" \
    'BEGIN { printf "%.1f ± %.1f", (a - b) / n * 1e6, sqrt(sa * sa + sb * sb) / n * 1e6 }'
}
builtin="$(per "$five" "$five_se" "$one" "$one_se" 4000)"
python="$(per "$py" "$py_se" "$one" "$one_se" 5000)"

echo "### A grader entry in a suite: 1,000 cases, --jobs 2, $repeats alternated runs"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg); $("$evalhost" --version)"
echo
echo "| suite | entries | CPU s (user + system), mean ± s.e. |"
echo "|---|--:|--:|"
echo "| one built-in entry a case | 1,000 | $one ± $one_se |"
echo "| five built-in entries a case | 5,000 | $five ± $five_se |"
echo "| one built-in and five Python entries a case | 6,000 | $py ± $py_se |"
echo
echo "Extra CPU per built-in entry: $builtin µs; \`grader_call session\` p50 per call, same run: $session_us µs"\
  "(ratio $(awk -v e="${builtin%% *}" -v s="$session_us" 'BEGIN { printf "%.2f", e / s }')×; target ≤ 1.5×)."
echo "Extra CPU per Python entry (five a case, one instance a run): $python µs (target ≤ 1,000 µs)."

if [ "$instructions" = 1 ]; then
  say "instruction counts (valgrind)"
  "$tool" gen "$work/one100" --cases 100 --checks 1 >/dev/null
  "$tool" gen "$work/five100" --cases 100 --checks 5 >/dev/null
  instr() { # OUT ARGS...: user-space instructions of one command under callgrind
    local out="$1"; shift
    valgrind --tool=callgrind --callgrind-out-file="$work/$out.cg" "$@" >/dev/null 2>&1
    awk '/^totals:/ { print $2 }' "$work/$out.cg"
  }
  # A first run compiles nothing (the cache is warm) but fills the history's store.
  instr warm "$evalhost" run --jobs 2 "$work"/one100/evalhost/part-* >/dev/null
  one_i="$(instr one "$evalhost" run --jobs 2 "$work"/one100/evalhost/part-*)"
  five_i="$(instr five "$evalhost" run --jobs 2 "$work"/five100/evalhost/part-*)"
  r20="$(instr r20 "$grader_call" session 20)"
  r60="$(instr r60 "$grader_call" session 60)"
  awk -v a="$one_i" -v b="$five_i" -v r20="$r20" -v r60="$r60" 'BEGIN {
    entry = (b - a) / 400; call = (r60 - r20) / 200
    printf "Instructions (callgrind, 100 cases): %.0f k per extra built-in entry; `grader_call session` %.0f k per call (ratio %.2f×).\n", entry / 1000, call / 1000, entry / call }'
fi
