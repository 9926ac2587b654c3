#!/usr/bin/env bash
# Smoke test of a runtime image built by build-runtime.sh, run by hand. The Maven build has its
# own, shorter one: RuntimeImageTest links an image from the build's jars and runs `binomic --help`
# and a master whose worker runs tasks against Redis.
#
#   binomic-it/scripts/smoke-runtime.sh [image-dir]      # default: ./runtime
#
# Checks: the launcher's help; a master on the embedded broker with two workers, seen by
# `binomic workers`, stopped with SIGTERM (exit 0, workers gone); and, when redis-server is on
# the PATH, `binomic queues` and a master against a throw-away Redis.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
IMAGE="$(realpath "${1:-$ROOT/runtime}")"
BINOMIC="$IMAGE/bin/binomic"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

step() { echo "smoke: $*" >&2; }
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }

step "image $IMAGE ($(du -sh "$IMAGE" | cut -f1))"
"$BINOMIC" --help > "$WORK/help.txt" || fail "binomic --help exited $?"
grep -q '^  master ' "$WORK/help.txt" || fail "help does not list master"
set +e; "$BINOMIC" queues --bogus 2> "$WORK/usage.txt"; code=$?; set -e
[ "$code" = 2 ] || fail "a bad option should exit 2, got $code"

# Starts a master on $1 in the background, waits for two RUNNING workers, SIGTERMs it, checks exit 0.
master_round_trip() {
    local broker="$1" state="$WORK/state-$2"
    "$BINOMIC" master --broker "$broker" --queues smoke --workers 2 --state-dir "$state" \
        --heartbeat-interval 500ms > "$WORK/master-$2.log" 2>&1 &
    local master=$!
    PIDS+=("$master")
    for _ in $(seq 1 120); do
        if [ -f "$state/workers.slots" ] && [ "$("$BINOMIC" workers --state-dir "$state" | grep -c ' RUNNING ')" = 2 ]; then
            break
        fi
        sleep 0.25
    done
    "$BINOMIC" workers --state-dir "$state" | tee "$WORK/workers-$2.txt" >&2
    [ "$(grep -c ' RUNNING ' "$WORK/workers-$2.txt")" = 2 ] || fail "two RUNNING workers on $broker; master log: $(cat "$WORK/master-$2.log")"
    local workers
    workers="$(awk 'NR > 2 { print $2 }' "$WORK/workers-$2.txt")"
    kill -TERM "$master"
    local code=0
    wait "$master" || code=$?
    [ "$code" = 0 ] || fail "master exited $code after SIGTERM; log: $(cat "$WORK/master-$2.log")"
    for pid in $workers; do
        if kill -0 "$pid" 2>/dev/null; then fail "worker $pid still alive after the master stopped"; fi
    done
    step "master on $broker: 2 workers, SIGTERM -> exit 0, workers gone"
}

master_round_trip "memory://" memory

if command -v redis-server > /dev/null; then
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" > "$WORK/redis.log" 2>&1 &
    PIDS+=("$!")
    disown # no "Killed" job notice when the cleanup stops it
    for _ in $(seq 1 50); do redis-cli -p "$port" ping > /dev/null 2>&1 && break; sleep 0.1; done
    "$BINOMIC" queues --broker "redis://127.0.0.1:$port" --queues smoke | tee "$WORK/queues.txt" >&2 \
        || fail "binomic queues against Redis"
    grep -q '^smoke ' "$WORK/queues.txt" || fail "queues shows the smoke queue"
    master_round_trip "redis://127.0.0.1:$port" redis
else
    step "redis-server not on the PATH: Redis checks skipped"
fi
step "OK"
