#!/usr/bin/env bash
# A production install of this checkout in DEST: the built server (dist/src), package.json, the lockfile
# and the production dependencies alone, with no compiler, bundler or test tool (docs/deployment.md:
# A production install). The checkout is built first when it is not (which needs its full install: the
# build is the only step that needs the dev dependencies).
#
#   scripts/install-production.sh DEST [--omit-optional]
#
# --omit-optional leaves out the optional dependencies (DuckDB: Parquet exports), which the server then
# refuses by name when asked for. DEST is replaced. Prints DEST's size at the end.
set -euo pipefail

usage() { echo "usage: scripts/install-production.sh DEST [--omit-optional]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dest=$1
omit=(--omit=dev)
case "${2:-}" in
  '') ;;
  --omit-optional) omit+=(--omit=optional) ;;
  *) usage ;;
esac
case "$dest" in /*) ;; *) dest="$PWD/$dest" ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f dist/src/cli/flagwire.cjs ] || [ ! -f dist/src/web-console/console.js ]; then
  [ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund # its prepare builds dist/
  [ -f dist/src/cli/flagwire.cjs ] || npm run build
fi
case "$dest/" in "$root"/*) echo "install-production: DEST must be outside the checkout" >&2; exit 2 ;; esac

rm -rf "$dest"
mkdir -p "$dest/scripts" "$dest/dist"
# The server's code without its source maps and V8 caches: the caches are written again by the
# install's first start (or baked into an image by scripts/image.sh), and are never read for other bundles.
tar -C dist --exclude='*.map' --exclude='*.v8-cache' -cf - src | tar -C "$dest/dist" -xf -
cp package-lock.json "$dest/"
cp scripts/patch-lmdb.mjs scripts/link-bin.mjs scripts/health-check.mjs "$dest/scripts/"
# package.json as it is but for its scripts: the install runs no build, and npm ci checks the
# dependencies (dev ones included) against the lockfile, so they stay listed.
node -e '
  const pkg = JSON.parse(require("node:fs").readFileSync("package.json", "utf8"));
  pkg.scripts = {
    postinstall: "node scripts/patch-lmdb.mjs && node scripts/link-bin.mjs",
    start: "node dist/src/cli/flagwire.cjs serve",
  };
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' > "$dest/package.json"

cd "$dest"
npm ci "${omit[@]}" --no-audit --no-fund --loglevel=error
node dist/src/cli/flagwire.cjs --version >/dev/null
echo "installed in $dest: $(du -sh --apparent-size "$dest" | cut -f1) ($(du -sh --apparent-size node_modules | cut -f1) of dependencies)"
