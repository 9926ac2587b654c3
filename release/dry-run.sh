#!/usr/bin/env bash
# A release rehearsal: builds the release profile (sources and javadoc jars, gpg signatures) and
# stages every published module to target/staging-repository, then the build checks the bundle
# (binomic-release/check-bundle.sh). Signs with a throwaway key made in a temporary GNUPGHOME;
# without gpg on the PATH it builds unsigned (-Dgpg.skip=true) and the check says so.
#
#   release/dry-run.sh [extra maven arguments]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$ROOT/target/staging-repository"
if command -v gpg > /dev/null; then
    GNUPGHOME="$(mktemp -d)"
    export GNUPGHOME
    trap 'gpgconf --kill gpg-agent 2>/dev/null || true; rm -rf "$GNUPGHOME"' EXIT
    gpg --batch --passphrase '' --quick-gen-key 'Binomic release rehearsal <rehearsal@binomic.invalid>' ed25519 sign 1d 2> /dev/null
    KEY="$(gpg --batch --list-secret-keys --with-colons | awk -F: '/^fpr/ {print $10; exit}')"
    echo "dry-run: signing with the throwaway key $KEY" >&2
    SIGN=(-Dgpg.keyname="$KEY")
else
    echo "dry-run: gpg is not on the PATH: building UNSIGNED (-Dgpg.skip=true)" >&2
    SIGN=(-Dgpg.skip=true)
fi
cd "$ROOT"
./mvnw -B -Prelease -DskipTests "${SIGN[@]}" "$@" deploy
