#!/usr/bin/env bash
# What a container costs a run (docs/performance.md, "Containers"), measured through the docker
# CLI against the running dockerd: the steps of one run's container, each --runs times:
#   create+start  `docker create` (workspace bind-mounted on /app, --network none) + `docker start`
#   exec true     `docker exec C true` in a running container (one agent command's overhead)
#   rm -f         `docker rm -f` of a running container (the end of a run)
#   lifecycle     create+start, one exec, rm -f: the least a run in a container adds
# with hyperfine when it is installed (apt-get install hyperfine; its shell start-up is
# subtracted), else a bash loop timing each call with `date +%s%N`. When both Debian's
# /usr/bin/docker and a newer /usr/local/bin/docker are there, each is measured.
#
#   bench/container.sh                       # 20 runs of each step
#   bench/container.sh --runs 50 --image evalhost-test/busybox:1
#
# The default image, evalhost-bench/busybox:1, is made here from busybox-static (a single
# `docker import`; nothing is pulled). Markdown on stdout, progress on stderr.
set -euo pipefail

runs=20
image=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift ;;
    --image) image="$2"; shift ;;
    *) echo "usage: bench/container.sh [--runs N] [--image IMAGE]" >&2; exit 2 ;;
  esac
  shift
done

say() { echo "bench: $*" >&2; }
docker info >/dev/null 2>&1 || { echo "docker info fails: start dockerd (as .ci/run does)" >&2; exit 2; }

work="$(mktemp -d)"
name="evalhost-bench-$$"
trap 'docker rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/app"

if [ -z "$image" ]; then
  image=evalhost-bench/busybox:1
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    [ -x /bin/busybox ] || { echo "no /bin/busybox: apt-get install busybox-static (or pass --image)" >&2; exit 2; }
    say "making $image from /bin/busybox"
    mkdir -p "$work/root/bin" "$work/root/app"
    cp /bin/busybox "$work/root/bin/"
    for applet in sh true sleep; do ln -s busybox "$work/root/bin/$applet"; done
    tar -C "$work/root" -cf - . | docker import --change 'WORKDIR /app' --change 'ENV PATH=/bin' - "$image" >/dev/null
  fi
fi

clients=()
for client in /usr/bin/docker /usr/local/bin/docker; do
  [ -x "$client" ] && clients+=("$client")
done
[ ${#clients[@]} -gt 0 ] || clients=("$(command -v docker)")

# The step commands for client $1 (the container is named $name).
create_start() { echo "$1 create --name $name --network none -v $work/app:/app $image sleep 3600 >/dev/null && $1 start $name >/dev/null"; }
remove() { echo "$1 rm -f $name >/dev/null"; }

# Rows: | step | client | mean | median | min | max | runs | (milliseconds).
row() { printf '| %s | `%s` | %.1f | %.1f | %.1f | %.1f | %s |\n' "$@"; }

# hyperfine_row STEP CLIENT PREPARE COMMAND: measure COMMAND (PREPARE before each run).
hyperfine_row() {
  hyperfine --style none --runs "$runs" --warmup 2 --prepare "$3" --export-csv "$work/t.csv" "$4" >/dev/null 2>&1 \
    || { say "$1 with $2 failed:"; bash -c "$3; $4" >&2; exit 1; }
  # CSV: command,mean,stddev,median,user,system,min,max (seconds).
  IFS=, read -r _ mean _ median _ _ min max < <(tail -1 "$work/t.csv")
  row "$1" "$2" "$(awk "BEGIN{print $mean*1000}")" "$(awk "BEGIN{print $median*1000}")" \
    "$(awk "BEGIN{print $min*1000}")" "$(awk "BEGIN{print $max*1000}")" "$runs"
}

# loop_row STEP CLIENT PREPARE COMMAND: the same with date +%s%N around each run.
loop_row() {
  local times=() i start end
  for i in $(seq $((runs + 2))); do
    bash -c "$3"
    start=$(date +%s%N)
    bash -c "$4" || { say "$1 with $2 failed"; exit 1; }
    end=$(date +%s%N)
    [ "$i" -gt 2 ] && times+=($(( (end - start) / 1000 )))  # the first two warm up
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v step="$1" -v client="$2" '
    { t[NR] = $1 / 1000; sum += t[NR] }
    END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2;
          printf "| %s | `%s` | %.1f | %.1f | %.1f | %.1f | %d |\n", step, client, sum / NR, m, t[1], t[NR], NR }'
}

if command -v hyperfine >/dev/null; then measure=hyperfine_row; tool="hyperfine $(hyperfine --version | cut -d' ' -f2)"
else measure=loop_row; tool="a bash loop (date +%s%N; includes a bash start-up per call)"; fi

say "measuring with $tool, $runs runs a step, image $image"
echo "Container cost per run, $runs runs a step, measured with $tool; dockerd $(docker version --format '{{.Server.Version}}'), $(nproc) cores."
echo
echo "| step | client | mean ms | median ms | min ms | max ms | runs |"
echo "|---|---|---|---|---|---|---|"
for client in "${clients[@]}"; do
  label="$client ($("$client" version --format '{{.Client.Version}}' 2>/dev/null))"
  gone="$client rm -f $name >/dev/null 2>&1 || true"
  running="$gone; $(create_start "$client")"
  $measure "create+start" "$label" "$gone" "$(create_start "$client")"
  bash -c "$running"
  $measure "exec true" "$label" "true" "$client exec $name true"
  $measure "rm -f" "$label" "$running" "$(remove "$client")"
  $measure "lifecycle" "$label" "$gone" "$(create_start "$client") && $client exec $name true && $(remove "$client")"
  bash -c "$gone"
done
