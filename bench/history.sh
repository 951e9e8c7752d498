# The history's costs (docs/history.md, docs/performance.md "History"). Sourced by run.sh after
# its suites ran (it sets $evalhost, $work, $repeats, measure(), say() and the suite
# $hist_dirs), or run on its own, which builds and generates what it needs:
#
#   bench/history.sh [--cases 10000] [--repeats 5] [--no-build]
#
#   1. recording: the suite run with --no-history and with a fresh store, side by side
#      (alternating, median of $repeats each): wall and peak RSS;
#   2. a store of 100 runs of the suite: the recorded run copied 99 times inside the store
#      (new ids and start times; every 10th copy fails a different tenth of the cases, so
#      comparisons and histories have something to show), its size per run;
#   3. `evalhost compare` of two such runs, and every `evalhost view` page, timed with curl
#      against the served store (median of 5 requests each).

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cases=10000; repeats=5; build=1
  while [ $# -gt 0 ]; do
    case "$1" in
      --cases) cases="$2"; shift ;;
      --repeats) repeats="$2"; shift ;;
      --no-build) build=0 ;;
      *) echo "usage: bench/history.sh [--cases N] [--repeats N] [--no-build]" >&2; exit 2 ;;
    esac
    shift
  done
  bench="$(cd "$(dirname "$0")" && pwd)"
  root="$(dirname "$bench")"
  cd "$root"
  [ "$build" = 1 ] && cargo build --release --quiet -p evalhost -p evalhost-bench
  target="${CARGO_TARGET_DIR:-$root/target}"
  evalhost="$target/release/evalhost"
  work="$(mktemp -d "${TMPDIR:-/tmp}/evalhost-bench.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # shellcheck source=bench/lib.sh
  . "$bench/lib.sh"
  export EVALHOST_HISTORY="$work/bench-history.db"
  say "generating $cases cases"
  hist_dirs="$("$target/release/evalhost-bench" gen "$work/suite" --cases "$cases" | tr '\n' ' ')"
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
fi

hist_cases="$(find $hist_dirs -name '*.yaml' | wc -l)"
say "history: recording $hist_cases cases, with and without"
walls_off=(); walls_on=(); rss_off=0; rss_on=0
for i in $(seq "$repeats"); do
  rm -f "$work/rec.db" "$work/rec.db-wal" "$work/rec.db-shm"
  repeats_saved="$repeats"; repeats=1
  # shellcheck disable=SC2086
  measure hist-off "$evalhost" run --jobs 2 --no-history $hist_dirs
  walls_off+=("$wall"); [ "$rss_mb" -gt "$rss_off" ] && rss_off="$rss_mb"
  # shellcheck disable=SC2086
  measure hist-on "$evalhost" run --jobs 2 --history "$work/rec.db" $hist_dirs
  walls_on+=("$wall"); [ "$rss_mb" -gt "$rss_on" ] && rss_on="$rss_mb"
  repeats="$repeats_saved"
done
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
off="$(median "${walls_off[@]}")"; on="$(median "${walls_on[@]}")"
echo "### History"
echo
echo "Recording $hist_cases replay cases (\`--jobs 2\`, median of $repeats, alternating): without history $off s wall, $rss_off MB peak RSS; recorded into a fresh SQLite store $on s wall, $rss_on MB peak RSS ($(awk -v a="$off" -v b="$on" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }') wall)."
one_run_bytes="$(du -b "$work/rec.db" | cut -f1)"
echo "One recorded run of $hist_cases cases: $(awk -v b="$one_run_bytes" 'BEGIN { printf "%.1f MB", b / 1048576 }') of store (session logs, evidence and workspace changes zstd-compressed)."

say "history: a store of 100 runs"
cp "$work/rec.db" "$work/store.db"
python3 - "$work/store.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
(base,) = db.execute("SELECT id FROM suite_runs").fetchone()
cols = lambda t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
run_cols, case_cols, crun_cols = cols("suite_runs"), cols("case_results"), cols("case_runs")
def copy(table, columns, key, new):
    sel = ", ".join("?" if c == key else c for c in columns)
    db.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {sel} FROM {table} WHERE {key} = ?", (new, base))
for n in range(1, 100):
    new = f"{n:016x}"
    sel = ", ".join({"id": "?", "started_ms": f"started_ms - {n} * 3600000"}.get(c, c) for c in run_cols)
    db.execute(f"INSERT INTO suite_runs ({', '.join(run_cols)}) SELECT {sel} FROM suite_runs WHERE id = ?", (new, base))
    copy("case_results", case_cols, "suite_run", new)
    copy("case_runs", crun_cols, "suite_run", new)
    if n % 10 == 0:
        tenth = (n // 10) % 10
        db.execute("UPDATE case_results SET pass = 0, passed = 0, failing = ' final_text_contains ' WHERE suite_run = ? AND ord % 10 = ?", (new, tenth))
        db.execute("UPDATE case_runs SET pass = 0 WHERE suite_run = ? AND case_ord % 10 = ?", (new, tenth))
    db.commit()
db.execute("VACUUM")
PY
store_bytes="$(du -b "$work/store.db" | cut -f1)"
runs_in_store="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM suite_runs').fetchone()[0])" "$work/store.db")"
echo "A store of $runs_in_store runs of $hist_cases cases: $(awk -v b="$store_bytes" 'BEGIN { printf "%.0f MB", b / 1048576 }'), $(awk -v b="$store_bytes" -v n="$runs_in_store" 'BEGIN { printf "%.1f MB", b / n / 1048576 }') a run."

# Two runs of the 100: the newest, and the copy whose tenth of the cases failed.
latest="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT id FROM suite_runs ORDER BY started_ms DESC LIMIT 1').fetchone()[0])" "$work/store.db")"
failing="000000000000000a"
repeats_saved="$repeats"; repeats=$(( repeats > 3 ? repeats : 3 ))
measure compare "$evalhost" compare "$failing" "$latest" --history "$work/store.db" --json
repeats="$repeats_saved"
echo "\`evalhost compare\` of two of them: $wall s wall, $rss_mb MB peak RSS (median of 3)."

if "$evalhost" view --help >/dev/null 2>&1; then
  say "history: evalhost view pages"
  "$evalhost" view --port 0 --history "$work/store.db" >"$work/view.out" 2>"$work/view.err" &
  view_pid=$!
  for _ in $(seq 100); do grep -q 'http://' "$work/view.out" 2>/dev/null && break; sleep 0.1; done
  base_url="$(grep -o 'http://[0-9.:]*' "$work/view.out" | head -1)"
  first_case="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT name FROM case_results WHERE suite_run = ? AND ord = 0', (sys.argv[2],)).fetchone()[0])" "$work/store.db" "$latest")"
  echo
  echo "| \`evalhost view\` page, 100 runs x $hist_cases cases | median of 5, ms |"
  echo "|---|--:|"
  slowest=0
  for page in "/" "/runs/$latest" "/runs/$latest?status=fail" "/runs/$latest?q=$first_case" "/runs/$latest?page=50" \
              "/runs/$latest/cases/$first_case" "/cases/$first_case" "/compare?a=$failing&b=$latest"; do
    times=()
    for _ in 1 2 3 4 5; do
      times+=("$(curl -s -o /dev/null -w '%{http_code} %{time_total}' -H "Host: ${base_url#http://}" "$base_url$page" | awk '$1 == 200 { printf "%.1f", $2 * 1000 } $1 != 200 { print "failed:" $1 }')")
    done
    ms="$(median "${times[@]}")"
    echo "| \`$page\` | $ms |"
    case "$ms" in failed*) ;; *) slowest="$(awk -v a="$slowest" -v b="$ms" 'BEGIN { print (b > a ? b : a) }')" ;; esac
  done
  kill "$view_pid" 2>/dev/null; wait "$view_pid" 2>/dev/null || true
  echo
  echo "Slowest page: $slowest ms (target: 200 ms)."
fi
echo
