#!/usr/bin/env bash
# Checks a staged release bundle as Maven Central would: every published module of the reactor
# (each <module> of the root pom.xml, and the root itself, except those whose pom sets
# maven.deploy.skip) has its POM and, for jar modules, its jar, sources jar and javadoc jar; each of
# those files has its .asc signature (verified with gpg) and .md5 and .sha1 checksums (compared);
# the BOM lists every published module; and the root POM (inherited by the modules) and the BOM name a
# url, licences, scm and developers.
#
#   check-bundle.sh STAGING_REPO ROOT VERSION UNSIGNED
#
# UNSIGNED=true (the build ran with -Dgpg.skip=true) skips the signatures and says so.
set -euo pipefail
STAGING="$1" ROOT="$2" VERSION="$3" UNSIGNED="${4:-false}"
GROUP_DIR="$STAGING/io/binomic"
fail=0
problem() { echo "check-bundle: $*" >&2; fail=1; }

[ -d "$GROUP_DIR" ] || { echo "check-bundle: nothing staged under $GROUP_DIR: run ./mvnw -Prelease -DskipTests deploy" >&2; exit 1; }

modules=(".")
while read -r m; do modules+=("$m"); done < <(sed -n 's|^ *<module>\(.*\)</module>.*|\1|p' "$ROOT/pom.xml" | sort -u)

# The newest staged file of an artifact with this suffix (a SNAPSHOT's files carry a timestamp for the version).
staged() {
    local dir="$1" artifact="$2" suffix="$3"
    ls -t "$dir"/"$artifact"-*"$suffix" 2>/dev/null | grep -v -e '\.asc$' -e '\.md5$' -e '\.sha1$' \
        | while read -r f; do
            case "$suffix" in
                .jar) case "$f" in *-sources.jar|*-javadoc.jar|*-tests.jar) continue ;; esac ;;
            esac
            echo "$f"; break
        done || true # none staged: the caller names what is missing (set -e must not end the check silently)
}

checked=0
published=()
for module in "${modules[@]}"; do
    pom="$ROOT/$module/pom.xml"
    [ -f "$pom" ] || continue
    grep -q '<maven.deploy.skip>true</maven.deploy.skip>' "$pom" && continue
    artifact="$(sed -n 's|^  <artifactId>\(.*\)</artifactId>|\1|p' "$pom" | head -1)"
    packaging="$(sed -n 's|^  <packaging>\(.*\)</packaging>|\1|p' "$pom" | head -1)"
    packaging="${packaging:-jar}"
    dir="$GROUP_DIR/$artifact/$VERSION"
    [ -d "$dir" ] || { problem "$artifact: not staged (no $dir)"; continue; }
    suffixes=(.pom)
    [ "$packaging" = jar ] && suffixes+=(.jar -sources.jar -javadoc.jar)
    for suffix in "${suffixes[@]}"; do
        file="$(staged "$dir" "$artifact" "$suffix")"
        [ -n "$file" ] || { problem "$artifact: no ${suffix#-} file in $dir"; continue; }
        for sum in md5 sha1; do
            if [ ! -f "$file.$sum" ]; then
                problem "$artifact: $(basename "$file").$sum is missing"
            elif [ "$(cut -c1-64 < "$file.$sum" | tr -d ' \n')" != "$(${sum}sum "$file" | cut -d' ' -f1)" ]; then
                problem "$artifact: $(basename "$file").$sum does not match the file"
            fi
        done
        if [ "$UNSIGNED" != true ]; then
            if [ ! -f "$file.asc" ]; then
                problem "$artifact: $(basename "$file").asc is missing"
            elif ! gpg --batch --verify "$file.asc" "$file" 2>/dev/null; then
                problem "$artifact: $(basename "$file").asc does not verify with gpg"
            fi
        fi
    done
    if [ "$packaging" = jar ]; then
        javadoc="$(staged "$dir" "$artifact" -javadoc.jar)"
        if [ -n "$javadoc" ] && ! unzip -l "$javadoc" index.html > /dev/null 2>&1; then
            problem "$artifact: its javadoc jar has no index.html"
        fi
    fi
    for element in name description; do
        grep -q "^  <$element>" "$pom" || problem "$artifact: its POM has no <$element>"
    done
    published+=("$artifact")
    checked=$((checked + 1))
done

# The BOM must list every published module but the parent and itself, or a user's import misses one.
for artifact in "${published[@]}"; do
    case "$artifact" in binomic-parent|binomic-bom) continue ;; esac
    grep -q "<artifactId>$artifact</artifactId>" "$ROOT/binomic-bom/pom.xml" || problem "$artifact: binomic-bom does not list it"
done

for pom in "$ROOT/pom.xml" "$ROOT/binomic-bom/pom.xml"; do
    for element in url licenses scm developers; do
        grep -q "^  <$element>" "$pom" || problem "$pom has no <$element> (Maven Central requires it)"
    done
done

if [ "$fail" != 0 ]; then
    echo "check-bundle: the bundle in $STAGING is incomplete (above)" >&2
    exit 1
fi
if [ "$UNSIGNED" = true ]; then
    echo "check-bundle: UNSIGNED: built with -Dgpg.skip=true; the .asc signatures were not made nor checked" >&2
fi
echo "check-bundle: $checked modules staged in $STAGING with every required file"
