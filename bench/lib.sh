# What the bench scripts share (sourced; `measure` needs $work and $repeats).

say() { echo "bench: $*" >&2; }

# median NUMBERS...: the middle one (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

# measure OUT_PREFIX CMD...: run CMD --repeats times under /usr/bin/time; sets
# wall (median seconds) and rss_mb (largest peak RSS) and fails loudly on a non-zero exit.
measure() {
  local name="$1"; shift
  local walls=() rss=0 i
  for i in $(seq "$repeats"); do
    if ! /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
      say "$name failed (exit code above); its output:"; tail -20 "$work/$name.out" "$work/$name.err" >&2
      exit 1
    fi
    read -r w m <"$work/time"
    walls+=("$w")
    [ "$m" -gt "$rss" ] && rss="$m"
  done
  wall="$(median "${walls[@]}")"
  rss_mb="$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')"
}
