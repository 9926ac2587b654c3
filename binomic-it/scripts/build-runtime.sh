#!/usr/bin/env bash
# Builds a self-contained Binomic runtime image with jlink: a trimmed JDK plus the Binomic and
# Redis broker jars, and a bin/binomic launcher for the master and the CLI.
#
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 binomic-it/scripts/build-runtime.sh [output-dir]
#
# Output (default: ./runtime):
#   bin/binomic   the launcher: `bin/binomic master --broker redis://host:6379 --queues emails`
#   bin/java      the linked JDK (only the JDK modules the jars need)
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
OUT="$(realpath -m "${1:-$ROOT/runtime}")"
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

echo "build-runtime: building the jars" >&2
# One reactor build from the root (-am), so no stale sibling jar from ~/.m2 slips in.
(cd "$ROOT" && ./mvnw -B -q -DskipTests -pl binomic-redis -am package \
    dependency:copy-dependencies -DincludeScope=runtime -DexcludeGroupIds=io.binomic -DoutputDirectory="$APP")
for module in binomic-api binomic-core binomic-redis; do
    find "$ROOT/$module/target" -maxdepth 1 -name "$module-*.jar" ! -name '*-tests.jar' ! -name '*-sources.jar' \
        -exec cp {} "$APP/" \;
done

echo "build-runtime: finding the JDK modules the jars need" >&2
# One jdeps call per jar: a single call over all jars under-reports (TOOLCHAIN.md).
MODULES="$(
    for jar in "$APP"/*.jar; do
        "$JDK_BIN/jdeps" --multi-release 25 --ignore-missing-deps --print-module-deps \
            --module-path "$APP" "$jar" 2>/dev/null || true
    done | tr ',' '\n'
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

echo "build-runtime: $OUT ($(du -sh "$OUT" | cut -f1)); try: $OUT/bin/binomic --help" >&2
