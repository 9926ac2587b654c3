#!/usr/bin/env bash
# Builds a self-contained Binomic runtime image with jlink: a trimmed JDK plus the Binomic and
# Redis broker jars, and a bin/binomic launcher for the master and the CLI.
#
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 binomic-it/scripts/build-runtime.sh [--jars DIR] [output-dir]
#
# It builds what it packages: one Maven reactor build from the root of binomic-api, binomic-core and
# binomic-redis (tests skipped), then exactly the jars of that build's version, refusing a jar
# older than its module's classes. With --jars DIR it builds nothing and packages the jars in DIR
# (the application module path: Binomic's and its dependencies'); the test suite does that with
# the jars its own reactor build just made (binomic-it/target/runtime-jars, see RuntimeImageTest).
#
# Output (default: ./runtime):
#   bin/binomic   the launcher: `bin/binomic master --broker redis://host:6379 --queues emails`
#   bin/java      the linked JDK (only the JDK modules the jars need)
#   bin/binomic-train-aot  retrains lib/binomic-worker.aot (below), e.g. after adding task jars
#   lib/binomic-worker.aot the JDK's ahead-of-time cache for the worker JVMs (JEP 483/514/515):
#                 classes loaded and linked, and method profiles, from a short training run of a
#                 master-spawned worker (on a temporary redis-server when one is on the PATH, else on
#                 the memory broker). The master passes it to its workers (-XX:AOTCache) when their
#                 module path is the one it was trained with (lib/binomic-worker.aot.modulepath).
#                 BINOMIC_TRAIN_AOT=no skips the training.
#   app/          the application module path: Binomic, Redisson and their dependencies.
#                 Put the jars of your tasks (the modules that provide TaskProvider) here too,
#                 or point BINOMIC_MODULE_PATH at them.
#
# Why the jars stay outside the linked image: Redisson's dependencies (reactor-core,
# reactive-streams, kryo, ...) are automatic modules, which jlink refuses to link. So only JDK
# modules are linked, and the launcher puts app/ on --module-path with
# --add-modules ALL-MODULE-PATH (automatic modules read only what something requires, and
# nothing requires the broker: ServiceLoader finds it). See DESIGN/TOOLCHAIN notes.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
USAGE="usage: build-runtime.sh [--jars DIR] [output-dir]   (output-dir defaults to ./runtime; see the comment at the top of this script)"
JARS=""
OUT_ARG=""
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) echo "$USAGE"; exit 0 ;;
        --jars)
            [ -n "${2:-}" ] && [ -d "$2" ] || { echo "build-runtime: --jars needs a directory of jars" >&2; exit 2; }
            JARS="$(realpath "$2")"
            shift 2 ;;
        -*) echo "build-runtime: unknown option '$1'; $USAGE" >&2; exit 2 ;;
        *)
            [ -z "$OUT_ARG" ] || { echo "build-runtime: one output directory only (got '$OUT_ARG' and '$1'); $USAGE" >&2; exit 2; }
            OUT_ARG="$1"
            shift ;;
    esac
done
OUT="$(realpath -m -- "${OUT_ARG:-$ROOT/runtime}")"
# The image replaces the output directory: only an empty one or an image this script made is removed.
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ] && ! { [ -f "$OUT/release" ] && [ -f "$OUT/bin/binomic" ]; }; then
    echo "build-runtime: $OUT exists and is not a runtime this script built (no release and bin/binomic in it): it would be" \
        "replaced; give a new or empty directory, or remove it yourself" >&2
    exit 2
fi
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export JAVA_HOME
JDK_BIN="$JAVA_HOME/bin"
if ! "$JDK_BIN/java" -version 2>&1 | grep -q 'version "25'; then
    echo "build-runtime: JAVA_HOME must be a JDK 25 (is $JAVA_HOME)" >&2
    exit 2
fi

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
APP="$STAGE/app"
mkdir -p "$APP"

if [ -n "$JARS" ]; then
    echo "build-runtime: packaging the jars of $JARS" >&2
    cp "$JARS"/*.jar "$APP/"
    for module in binomic-api binomic-core binomic-redis; do
        ls "$APP/$module"-*.jar > /dev/null 2>&1 || { echo "build-runtime: $JARS has no $module jar" >&2; exit 2; }
    done
else
    echo "build-runtime: building the jars" >&2
    # One reactor build from the root that names every module it packages: binomic-redis does not
    # depend on binomic-core, so '-pl binomic-redis -am' left core unbuilt (a fresh clone failed, a
    # built tree packaged whatever old core jar lay in target/).
    # binomic-cli for its SLF4J provider (slf4j-jdk14): Redisson's logs go where Binomic's go, without slf4j-api's warning.
    (cd "$ROOT" && ./mvnw -B -q -DskipTests -pl binomic-core,binomic-redis,binomic-cli -am package \
        dependency:copy-dependencies -DincludeScope=runtime -DexcludeGroupIds=io.binomic -DoutputDirectory="$APP")
    VERSION="$(sed -n 's|^  <version>\(.*\)</version>|\1|p' "$ROOT/pom.xml" | head -1)"
    for module in binomic-api binomic-core binomic-redis; do
        jar="$ROOT/$module/target/$module-$VERSION.jar"
        [ -f "$jar" ] || { echo "build-runtime: the build made no $jar" >&2; exit 1; }
        if [ -n "$(find "$ROOT/$module/target/classes" -type f -newer "$jar" -print -quit)" ]; then
            echo "build-runtime: $jar is older than its classes: a stale jar; run the script again" >&2
            exit 1
        fi
        cp "$jar" "$APP/"
    done
fi

echo "build-runtime: finding the JDK modules the jars need" >&2
# One jdeps run per jar: a single run over all jars under-reports (TOOLCHAIN.md). All runs in one
# JVM through the jdeps ToolProvider: a JVM start per jar made this step take twice as long.
cat > "$STAGE/JdepsEach.java" <<'JAVA'
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.spi.ToolProvider;

public class JdepsEach {
    public static void main(String[] args) throws Exception {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(Path.of(args[0]), "*.jar")) {
            for (Path jar : jars) {
                StringWriter out = new StringWriter();
                jdeps.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), "--multi-release", "25",
                        "--ignore-missing-deps", "--print-module-deps", "--module-path", args[0], jar.toString());
                System.out.println(out.toString().strip());
            }
        }
    }
}
JAVA
MODULES="$(
    "$JDK_BIN/java" "$STAGE/JdepsEach.java" "$APP" | tr ',' '\n'
    # Always: the System.Logger backend, the JFR events of the core, sun.misc.Unsafe for Netty,
    # and the TLS/DNS pieces a rediss:// connection may need.
    printf '%s\n' java.logging jdk.jfr jdk.unsupported jdk.crypto.ec jdk.naming.dns
)"
MODULES="$(echo "$MODULES" | grep -E '^(java|jdk)\.' | sort -u | paste -sd, -)"
echo "build-runtime: linking $MODULES" >&2

rm -rf "$OUT"
"$JDK_BIN/jlink" --add-modules "$MODULES" --output "$OUT" \
    --strip-debug --no-header-files --no-man-pages --compress zip-6
mkdir -p "$OUT/app"
cp "$APP"/*.jar "$OUT/app/"

cat > "$OUT/bin/binomic" <<'LAUNCHER'
#!/bin/sh
# Binomic launcher: runs the CLI (and through `binomic master`, the worker JVMs) on this image's
# Java with app/ and $BINOMIC_MODULE_PATH on the module path. Extra JVM options: $BINOMIC_JAVA_OPTS.
HOME_DIR="$(cd "$(dirname "$0")/.." && pwd)"
MODULE_PATH="$HOME_DIR/app"
if [ -n "${BINOMIC_MODULE_PATH:-}" ]; then
    MODULE_PATH="$MODULE_PATH:$BINOMIC_MODULE_PATH"
fi
# shellcheck disable=SC2086 # BINOMIC_JAVA_OPTS is a list of options
exec "$HOME_DIR/bin/java" --enable-preview ${BINOMIC_JAVA_OPTS:-} \
    --module-path "$MODULE_PATH" --add-modules ALL-MODULE-PATH \
    -m io.binomic.core/io.binomic.core.internal.cli.BinomicCli "$@"
LAUNCHER
chmod +x "$OUT/bin/binomic"

cat > "$OUT/bin/binomic-train-aot" <<'TRAIN'
#!/bin/sh
# Trains lib/binomic-worker.aot, the ahead-of-time cache of the worker JVMs (JEP 483/514/515),
# with a representative short run: a master of this image starts one worker with
# -XX:AOTCacheOutput on the broker given (default: the in-JVM memory broker), the worker starts,
# polls its queue for a few seconds and drains; at its exit the JVM writes the cache.
#
#   bin/binomic-train-aot [BROKER_URL]     e.g. redis://localhost:6379 (only a queue named
#                                          binomic-aot-training is read; nothing is written to others)
#
# The JVM uses a cache only with the module path it was trained with, so train again with the same
# BINOMIC_MODULE_PATH as the master after adding or changing task jars (and after replacing app/).
# The module path is written to lib/binomic-worker.aot.modulepath; the master passes the cache only
# to workers with that module path. BINOMIC_AOT_TRAINING_SECONDS: how long the worker runs (3).
set -eu
HOME_DIR="$(cd "$(dirname "$0")/.." && pwd)"
MODULE_PATH="$HOME_DIR/app"
if [ -n "${BINOMIC_MODULE_PATH:-}" ]; then
    MODULE_PATH="$MODULE_PATH:$BINOMIC_MODULE_PATH"
fi
CACHE="$HOME_DIR/lib/binomic-worker.aot"
# The arguments are checked before the cache is removed: a mistyped call must not leave the workers without one.
case "${1:-}" in
    -h|--help) echo "usage: bin/binomic-train-aot [BROKER_URL]   (default memory://binomic-aot-training; retrains $CACHE)"; exit 0 ;;
    -*) echo "binomic-train-aot: unknown option '$1'; usage: bin/binomic-train-aot [BROKER_URL]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "binomic-train-aot: one broker URL at most; usage: bin/binomic-train-aot [BROKER_URL]" >&2; exit 2; }
BROKER="${1:-memory://binomic-aot-training}"
STATE="$(mktemp -d)"
trap 'rm -rf "$STATE"' EXIT
rm -f "$CACHE" "$CACHE.modulepath"
# A long kill grace: at exit the worker JVM starts a second JVM that writes the cache (seconds).
# A memory:// broker is the worker's own, which the master refuses unless told that is meant.
PRIVATE=""
case "$BROKER" in memory:*) PRIVATE="--private-memory-broker" ;; esac
"$HOME_DIR/bin/binomic" master --broker "$BROKER" $PRIVATE --queues binomic-aot-training --workers 1 --concurrency 5 \
    --state-dir "$STATE" --heartbeat-interval 200ms --shutdown-grace 1s --kill-grace 120s \
    --jvm-option=-XX:AOTCacheOutput="$CACHE" > "$STATE/master.log" 2>&1 &
MASTER=$!
i=0
until grep -q "running after" "$STATE/master.log" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 1200 ] || ! kill -0 "$MASTER" 2>/dev/null; then
        kill "$MASTER" 2>/dev/null || true
        echo "binomic-train-aot: the training worker did not start; master log:" >&2
        cat "$STATE/master.log" "$STATE/logs/worker-0.log" >&2 2>/dev/null || true
        exit 1
    fi
    sleep 0.1
done
sleep "${BINOMIC_AOT_TRAINING_SECONDS:-3}"
kill -TERM "$MASTER"
wait "$MASTER" || true
if [ ! -s "$CACHE" ]; then
    echo "binomic-train-aot: no cache written; worker log:" >&2
    cat "$STATE/logs/worker-0.log" >&2 2>/dev/null || true
    exit 1
fi
printf '%s\n' "$MODULE_PATH" > "$CACHE.modulepath"
echo "binomic-train-aot: $CACHE ($(du -h "$CACHE" | cut -f1)) for module path $MODULE_PATH" >&2
TRAIN
chmod +x "$OUT/bin/binomic-train-aot"

if [ "${BINOMIC_TRAIN_AOT:-yes}" != "no" ]; then
    echo "build-runtime: training the worker AOT cache" >&2
    BROKER_URL="memory://binomic-aot-training"
    REDIS_PID=""
    # Redis when it is there: the worker's Redis client (Redisson, Netty) is most of its start.
    if command -v redis-server > /dev/null 2>&1; then
        for _ in 1 2 3 4 5; do
            PORT=$((20000 + RANDOM % 40000))
            redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$STAGE" > "$STAGE/redis.log" 2>&1 &
            REDIS_PID=$!
            for _ in $(seq 1 50); do
                grep -q "Ready to accept connections" "$STAGE/redis.log" && break
                kill -0 "$REDIS_PID" 2> /dev/null || break
                sleep 0.1
            done
            if kill -0 "$REDIS_PID" 2> /dev/null && grep -q "Ready to accept connections" "$STAGE/redis.log"; then
                BROKER_URL="redis://127.0.0.1:$PORT"
                break
            fi
            REDIS_PID=""
        done
    fi
    trap '[ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2> /dev/null; rm -rf "$STAGE"' EXIT
    echo "build-runtime: training on $BROKER_URL" >&2
    # Not fatal: the image works without the cache (workers just start slower); RuntimeImageTest insists on it.
    env -u BINOMIC_MODULE_PATH "$OUT/bin/binomic-train-aot" "$BROKER_URL" \
        || echo "build-runtime: WARNING: the AOT training failed (see above); the image has no worker cache; retry with $OUT/bin/binomic-train-aot" >&2
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2> /dev/null || true
        wait "$REDIS_PID" 2> /dev/null || true
        REDIS_PID=""
    fi
fi

echo "build-runtime: $OUT ($(du -sh "$OUT" | cut -f1)); try: $OUT/bin/binomic --help" >&2
