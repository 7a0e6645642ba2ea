#!/usr/bin/env bash
# Unpacks arrow-rs's `parquet` 60.1.0 as published on crates.io into crate/patches/parquet/vendor
# and applies fixes.patch to it; the workspace's [patch.crates-io] builds that copy. Only the diff
# is kept in git (README.md here lists each fix). The crate file comes from cargo's download cache
# when it is there, else from static.crates.io, and must match the checksum Cargo.lock pinned
# before the patch. Idempotent: does nothing while the copy matches fixes.patch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=60.1.0
sha256=806eaa0f1c0436dcb43bee8e6a82bf2efff90521a60172f8281cb9ef577b43a4
vendor="$here/vendor"
stamp="$vendor/.parquet-skim-patch"
want="$version $(sha256sum "$here/fixes.patch" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

echo "setup: unpacking parquet $version and applying crate/patches/parquet/fixes.patch"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
crate_file=""
for f in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/parquet-$version.crate; do
  [ -f "$f" ] && crate_file="$f" && break
done
if [ -z "$crate_file" ]; then
  crate_file="$tmp/parquet-$version.crate"
  curl -fsSL --retry 3 -o "$crate_file" "https://static.crates.io/crates/parquet/parquet-$version.crate"
fi
got=$(sha256sum "$crate_file" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "setup: parquet-$version.crate has sha256 $got, expected $sha256; delete it and rerun" >&2
  exit 1
fi
tar -xzf "$crate_file" -C "$tmp"
(cd "$tmp/parquet-$version" && patch -p1 --quiet --no-backup-if-mismatch < "$here/fixes.patch")
rm -rf "$vendor"
mv "$tmp/parquet-$version" "$vendor"
echo "$want" > "$stamp"
