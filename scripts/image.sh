#!/usr/bin/env bash
# Flagwire's OCI image (docs/deployment.md: An image), built with buildah from scratch, since no
# registry's base image can be pulled: this machine's Node.js and the libraries it and the native
# packages link, a production install (scripts/install-production.sh) with only this platform's
# binaries, and a user of its own. The V8 code cache is baked in by one start during the build.
#
#   scripts/image.sh [TAG] [--archive FILE]
#
# TAG defaults to flagwire:VERSION (package.json). --archive also writes the image as an OCI archive
# (for `podman load`, `skopeo copy`, a registry push elsewhere). Prints the image's id and size.
# Runs as root or rootless wherever buildah does; the build uses chroot isolation (no daemon, no
# network namespace needed).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=$(node -p "require('$root/package.json').version")
tag=flagwire:$version
archive=
while [ $# -gt 0 ]; do
  case "$1" in
    --archive) archive=$2; shift 2 ;;
    -*) echo "usage: scripts/image.sh [TAG] [--archive FILE]" >&2; exit 2 ;;
    *) tag=$1; shift ;;
  esac
done
command -v buildah >/dev/null || "$root/scripts/ensure.sh" apt buildah
export BUILDAH_ISOLATION=chroot
# Docker's image format: OCI's image configuration has no health check.
export BUILDAH_FORMAT=docker

# The user the server runs as: not root, and owning nothing but the data directory.
uid=10001
work=$(mktemp -d)
ctr=
cleanup() {
  [ -z "$ctr" ] || buildah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$root/scripts/install-production.sh" "$work/app" >/dev/null

# Only this platform's native binaries: uWebSockets.js's package carries them for every platform and
# Node.js ABI, lmdb's and msgpackr's carry musl's beside glibc's.
abi=$(node -p process.versions.modules)
platform=$(node -p "process.platform + '_' + process.arch")
find "$work/app/node_modules/uWebSockets.js" -name 'uws_*.node' ! -name "uws_${platform}_${abi}.node" -delete
find "$work/app/node_modules" -name '*.node' \( -name '*musl*' -o \( -name '*.abi*' ! -name "*.abi${abi}.*" \) \) -delete

ctr=$(buildah from scratch)
mnt=$(buildah mount "$ctr")
node_bin=$(command -v node)
install -D -m 0755 "$node_bin" "$mnt/usr/local/bin/node"
# The shared libraries Node.js and every native package link, resolved as this machine resolves them.
{
  ldd "$node_bin"
  find "$work/app/node_modules" -name '*.node' -exec ldd {} \;
} | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u | while read -r lib; do
  install -D -m 0755 "$(readlink -f "$lib")" "$mnt$lib"
done
mkdir -p "$mnt/etc" "$mnt/data" "$mnt/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nflagwire:x:%s:%s:flagwire:/data:/sbin/nologin\n' "$uid" "$uid" >"$mnt/etc/passwd"
printf 'root:x:0:\nflagwire:x:%s:\n' "$uid" >"$mnt/etc/group"
chmod 1777 "$mnt/tmp"
chown "$uid:$uid" "$mnt/data"
cp -a "$work/app" "$mnt/app"
chown -R 0:0 "$mnt/app"
chmod -R go-w "$mnt/app"

# One start on the demo writes V8's code cache beside the bundles (docs/deployment.md: One node); its
# data directory goes with the build.
buildah run --env FLAGWIRE_SYNC_PORT=0 --env FLAGWIRE_LOG_LEVEL=warn "$ctr" -- /usr/local/bin/node -e '
  const { spawn } = require("node:child_process");
  const server = spawn(process.execPath, ["/app/dist/src/cli/flagwire.cjs", "serve", "--demo", "--data", "/tmp/warm", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    if (/Flagwire listening/.test(out)) setTimeout(() => server.kill("SIGTERM"), 6000);
  });
  server.on("exit", (code) => process.exit(code ?? 1));
' >/dev/null
rm -rf "$mnt/tmp/warm"
[ -n "$(find "$mnt/app/dist/src" -name '*.v8-cache' -print -quit)" ] || { echo "image.sh: no V8 code cache was written" >&2; exit 1; }

buildah config \
  --user "$uid:$uid" \
  --workingdir /app \
  --env NODE_ENV=production \
  --env FLAGWIRE_DATA=/data \
  --env FLAGWIRE_HOST=0.0.0.0 \
  --env FLAGWIRE_PORT=8080 \
  --port 8080 \
  --volume /data \
  --entrypoint '["/usr/local/bin/node", "/app/dist/src/cli/flagwire.cjs"]' \
  --cmd serve \
  --stop-signal SIGTERM \
  --healthcheck 'CMD /usr/local/bin/node /app/scripts/health-check.mjs' \
  --healthcheck-interval 10s \
  --healthcheck-timeout 3s \
  --healthcheck-retries 3 \
  --healthcheck-start-period 10s \
  --label org.opencontainers.image.title=flagwire \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)" \
  "$ctr"
buildah unmount "$ctr" >/dev/null
id=$(buildah commit --quiet --rm "$ctr" "$tag")
ctr=
[ -z "$archive" ] || buildah push --quiet "$tag" "oci-archive:$archive:$tag" >/dev/null
echo "built $tag ($id): $(buildah images --format '{{.Size}}' "$tag")"
