#!/usr/bin/env bash
# Provision the real components the test suite runs against.
#
#   bash test/infra/provision.sh [postgres] [opensearch] [kube] [helm] [datahub] [cluster]   (no arguments: all)
#
# Idempotent. Whatever is built or downloaded is cached per version under
# ${SVC_CACHE_DIR:-$HOME/.cache/svc-test}/<component>-<version>/ so a warm run takes seconds.
# Logs go to stderr. On success stdout carries only KEY=VALUE lines:
#   SVC_PG_BIN, SVC_OPENSEARCH_HOME, SVC_JAVA_HOME, SVC_KUBE_APISERVER, SVC_ETCD, SVC_HELM, SVC_DATAHUB_BINS,
#   and for the test cluster SVC_KUBE_NODE_BIN, SVC_KUBE_SOURCE, SVC_COREDNS, SVC_CLUSTER_IMAGES
# On failure the last stderr line is a one-line reason (e.g. "provision: go not found ...")
# and the exit status is non-zero, so a caller can skip the tests needing that component.
#
# Toolchains: postgres and etcd come from apt (root only, when missing); opensearch needs java 17,
# mvn and unzip; kube and helm need go; datahub needs python3 (with venv) and PyPI. SVC_KUBE_GOTOOLCHAIN (e.g. go1.23.12) builds kube-apiserver
# with another Go toolchain, fetched through the module proxy, should the installed Go fail on it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${SVC_CACHE_DIR:-$HOME/.cache/svc-test}"
mkdir -p "$cache_root"

log() { printf 'provision: %s\n' "$*" >&2; }
die() { printf 'provision: %s\n' "$*" >&2; exit 1; }
out() { printf '%s=%s\n' "$1" "$2"; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH (needed for $2)"; }

# Runs "$@" with its stdout sent to stderr, so only our KEY=VALUE lines reach stdout.
quiet() { "$@" 1>&2; }

# One provisioning of a cache folder at a time (a second concurrent run waits).
with_lock() {
  local dir="$1"; shift
  mkdir -p "$dir"
  exec {lockfd}>"$dir.lock"
  flock "$lockfd"
  "$@"
  local rc=$?
  flock -u "$lockfd"
  exec {lockfd}>&-
  return $rc
}

apt_updated=0
apt_install() {
  need apt-get "installing $*"
  if [ "$apt_updated" = 0 ]; then
    log "apt-get update"
    quiet env DEBIAN_FRONTEND=noninteractive apt-get update -q || die "apt-get update failed"
    apt_updated=1
  fi
  log "apt-get install $*"
  quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
    || die "apt-get install $* failed"
}

# ---------------------------------------------------------------------------------------------
# Java (for OpenSearch)

# A version check reads the whole output first: `cmd | grep -q` under pipefail fails at random when grep
# exits early and cmd dies of SIGPIPE.
java_is_wanted() {
  local version
  version="$("$1/bin/java" -version 2>&1 || true)"
  grep -qE "version \"$JAVA_MAJOR(\.|\")" <<<"$version"
}

find_java_home() {
  local candidate
  for candidate in "${SVC_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/java-"$JAVA_MAJOR"-openjdk-amd64 \
    /usr/lib/jvm/java-"$JAVA_MAJOR"-openjdk /usr/lib/jvm/temurin-"$JAVA_MAJOR"-jdk-amd64; do
    if [ -n "$candidate" ] && [ -x "$candidate/bin/java" ]; then
      if java_is_wanted "$candidate"; then
        echo "$candidate"
        return 0
      fi
    fi
  done
  if command -v java >/dev/null 2>&1; then
    candidate="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    if java_is_wanted "$candidate"; then
      echo "$candidate"
      return 0
    fi
  fi
  return 1
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL

provision_postgres() {
  local bin="/usr/lib/postgresql/$POSTGRES_MAJOR/bin"
  if [ ! -x "$bin/initdb" ]; then
    [ "$(id -u)" = 0 ] || die "postgresql-$POSTGRES_MAJOR is not installed, and only root can apt-get install it"
    apt_install "postgresql-$POSTGRES_MAJOR"
  fi
  [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] || die "postgres: $bin/initdb missing after install"
  log "postgres: $("$bin/postgres" --version)"
  out SVC_PG_BIN "$bin"
}

# ---------------------------------------------------------------------------------------------
# OpenSearch: the integ-test-zip from Maven Central plus the modules that zip leaves out
# (reindex, analysis-common, lang-painless), assembled from their published jars.

provision_opensearch() {
  local java_home
  java_home="$(find_java_home)" || die "java $JAVA_MAJOR not found (needed for OpenSearch); set JAVA_HOME"
  local dir="$cache_root/opensearch-$OPENSEARCH_VERSION"
  if [ ! -f "$dir/home/.svc-complete" ]; then
    need mvn "downloading OpenSearch from Maven Central"
    need unzip "unpacking OpenSearch"
    with_lock "$dir" assemble_opensearch "$dir" "$java_home"
  fi
  out SVC_OPENSEARCH_HOME "$dir/home"
  out SVC_JAVA_HOME "$java_home"
}

# Maven's local repository for these downloads lives in the cache too, so its path is known.
maven_repo="$cache_root/maven-repository"
mvn_quiet() {
  # Maven's launcher prints colour resets even in batch mode; strip them from the log.
  mvn -B -q -Dstyle.color=never "-Dmaven.repo.local=$maven_repo" "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' >&2
}

# Prints the path of an artifact in the local Maven repository after fetching it (no dependencies).
maven_fetch() {
  local group="$1" artifact="$2" version="$3" type="${4:-jar}"
  mvn_quiet dependency:get "-Dartifact=$group:$artifact:$version:$type" -Dtransitive=false \
    || die "opensearch: could not fetch $group:$artifact:$version:$type from Maven Central"
  echo "$maven_repo/${group//.//}/$artifact/$version/$artifact-$version.$type"
}

# Copies a published plugin jar and its runtime dependencies into a module folder, leaving out every
# jar the server already has in lib/ (a class on both class paths fails OpenSearch's jar-hell check).
assemble_module() {
  local home="$1" name="$2" artifact="$3" classname="$4" description="$5" extends="$6"
  local module="$home/modules/$name" work="$home/../module-$name"
  rm -rf "$module" "$work"; mkdir -p "$module" "$work"
  cat >"$work/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>svc.test</groupId><artifactId>opensearch-module-$name</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.opensearch.plugin</groupId><artifactId>$artifact</artifactId>
      <version>$OPENSEARCH_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$work" && mvn_quiet dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$module") \
    || die "opensearch: could not fetch $artifact $OPENSEARCH_VERSION and its dependencies"
  rm -rf "$work"
  local jar base
  for jar in "$module"/*.jar; do
    base="$(basename "$jar" | sed -E 's/-[0-9][0-9.]*(-[A-Za-z0-9.]+)?\.jar$//')"
    if compgen -G "$home/lib/$base-[0-9]*.jar" >/dev/null; then rm -f "$jar"; fi
  done
  # A module that extends another shares its class loader: drop the jars the parent already has.
  if [ -n "$extends" ]; then
    for jar in "$module"/*.jar; do
      if [ -f "$home/modules/$extends/$(basename "$jar")" ]; then rm -f "$jar"; fi
    done
  fi
  cat >"$module/plugin-descriptor.properties" <<EOF
description=$description
version=$OPENSEARCH_VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$OPENSEARCH_VERSION
custom.foldername=
extended.plugins=$extends
has.native.controller=false
EOF
  log "opensearch: module $name: $(cd "$module" && ls ./*.jar | xargs -n1 basename | tr '\n' ' ')"
}

assemble_opensearch() {
  local dir="$1" java_home="$2"
  [ -f "$dir/home/.svc-complete" ] && return 0
  local zip
  zip="$(maven_fetch org.opensearch.distribution.integ-test-zip opensearch "$OPENSEARCH_VERSION" zip)"
  [ -f "$zip" ] || die "opensearch: $zip missing after download"
  rm -rf "$dir/home" "$dir/unpack"; mkdir -p "$dir/unpack"
  unzip -q "$zip" -d "$dir/unpack" || die "opensearch: could not unpack $zip"
  local home="$dir/unpack/opensearch-$OPENSEARCH_VERSION"
  [ -x "$home/bin/opensearch" ] || die "opensearch: unexpected layout in $zip"

  # Painless first: analysis-common extends it (its analysis scripts are Painless extensions).
  assemble_module "$home" lang-painless lang-painless org.opensearch.painless.PainlessPlugin \
    "An easy, safe and fast scripting language for OpenSearch" ""
  cat >"$home/modules/lang-painless/plugin-security.policy" <<'EOF'
grant {
  // Painless compiles scripts to classes in class loaders of its own.
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
  assemble_module "$home" analysis-common analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin \
    "Adds \"built in\" analyzers to OpenSearch." lang-painless
  assemble_module "$home" reindex reindex-client org.opensearch.index.reindex.ReindexPlugin \
    "The Reindex module adds APIs to reindex from one index to another or update documents in place." ""
  cat >"$home/modules/reindex/plugin-security.policy" <<'EOF'
grant {
  // Reindex from a remote cluster opens connections to it.
  permission java.net.SocketPermission "*", "connect";
};
EOF
  chmod -R a+rX "$home"
  touch "$home/.svc-complete"
  mv "$home" "$dir/home"
  rm -rf "$dir/unpack"
  log "opensearch: assembled $OPENSEARCH_VERSION in $dir/home"
}

# ---------------------------------------------------------------------------------------------
# kube-apiserver (built from the Go module) and etcd (Debian)

provision_kube() {
  local dir="$cache_root/kube-apiserver-$KUBE_VERSION"
  local binary="$dir/bin/kube-apiserver"
  if [ ! -x "$binary" ]; then
    need go "building kube-apiserver"
    with_lock "$dir" build_kube_apiserver "$dir"
  fi
  "$binary" --version >&2 || die "kube-apiserver: $binary does not run"
  local reported
  reported="$("$binary" --version)"
  [ "$reported" = "Kubernetes v$KUBE_VERSION" ] || die "kube-apiserver: $binary reports $reported, not v$KUBE_VERSION"
  out SVC_KUBE_APISERVER "$binary"
  provision_etcd
}

build_kube_apiserver() {
  local dir="$1"
  [ -x "$dir/bin/kube-apiserver" ] && return 0
  build_kube_commands "$dir" kube-apiserver
}

# Builds the named commands of k8s.io/kubernetes (cmd/<name>) at KUBE_VERSION into $dir/bin, from one
# wrapper module: k8s.io/kubernetes replaces its staging modules with local folders, so `go install`
# cannot build them; the wrapper pins each staging module to its published version instead. Every
# command shares Go's build cache, so the second one costs a fraction of the first.
build_kube_commands() {
  local dir="$1"; shift
  local minor="${KUBE_VERSION#*.}"; minor="${minor%%.*}"
  local staging_version="v0.${KUBE_VERSION#*.}"
  local mod="$dir/wrapper"
  rm -rf "$mod"; mkdir -p "$mod" "$dir/bin"
  log "kubernetes: building $* v$KUBE_VERSION from the Go module (cold: several minutes, ~2 GB)"
  (
    cd "$mod"
    export GOFLAGS=-mod=mod GOTOOLCHAIN="${SVC_KUBE_GOTOOLCHAIN:-${GOTOOLCHAIN:-local}}"
    quiet go mod init svc.test/kube-build
    local gomod
    gomod="$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    [ -f "$gomod" ] || die "kubernetes: could not download k8s.io/kubernetes@v$KUBE_VERSION"
    # k8s.io/kubernetes replaces its staging modules with local folders; pin each to its published version.
    local staging
    staging="$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/.*#\1#p' "$gomod")"
    [ -n "$staging" ] || die "kubernetes: no staging modules found in $gomod"
    log "kubernetes: $(echo "$staging" | wc -l) staging modules pinned to $staging_version"
    local args=("-require=k8s.io/kubernetes@v$KUBE_VERSION")
    local m
    local override
    for m in $staging; do
      # A staging module the proxy does not serve at this version is pinned as versions.env says.
      override="$(tr ' ' '\n' <<<"${KUBE_STAGING_OVERRIDES:-}" | sed -n "s#^$m=##p")"
      args+=("-replace=$m=$m@${override:-$staging_version}")
    done
    go mod edit "${args[@]}"
    local cmd pkgs=()
    for cmd in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
    quiet go get "${pkgs[@]/%/@v$KUBE_VERSION}"
    local pkg=k8s.io/component-base/version
    local ldflags="-s -w -X $pkg.gitVersion=v$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
    local timer=()
    [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$dir/build-time.txt")
    mkdir -p "$dir/bin.tmp"
    CGO_ENABLED=0 quiet "${timer[@]}" go build -trimpath -ldflags "$ldflags" -o "$dir/bin.tmp/" "${pkgs[@]}"
  ) || die "kubernetes: build of $* v$KUBE_VERSION failed (see the log above)"
  local cmd
  for cmd in "$@"; do mv "$dir/bin.tmp/$cmd" "$dir/bin/$cmd"; done
  rm -rf "$dir/bin.tmp"
  [ -f "$dir/build-time.txt" ] && grep -E 'Elapsed|Maximum resident' "$dir/build-time.txt" | sed "s/^/provision: $* build: /" >&2
  rm -rf "$mod"
}

provision_etcd() {
  local etcd=/usr/bin/etcd
  if [ ! -x "$etcd" ]; then
    [ "$(id -u)" = 0 ] || die "$ETCD_DEB_PACKAGE is not installed, and only root can apt-get install it"
    apt_install "$ETCD_DEB_PACKAGE"
    # Debian's package starts a system etcd on 2379; the tests run their own.
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
      systemctl disable --now etcd >/dev/null 2>&1 || true
    fi
  fi
  [ -x "$etcd" ] || die "etcd: $etcd missing after install"
  local reported
  reported="$("$etcd" --version 2>/dev/null || true)"
  grep -q "etcd Version: $ETCD_MAJOR_MINOR\." <<<"$reported" || die "etcd: $etcd is not version $ETCD_MAJOR_MINOR.x"
  log "etcd: ${reported%%$'\n'*}"
  out SVC_ETCD "$etcd"
}

# ---------------------------------------------------------------------------------------------
# Helm (built from the Go module; it has no replace directives, so `go install` works)

provision_helm() {
  local dir="$cache_root/helm-$HELM_VERSION"
  local binary="$dir/bin/helm"
  if [ ! -x "$binary" ]; then
    need go "building helm"
    with_lock "$dir" build_helm "$dir"
  fi
  local printed
  printed="$("$binary" version --template '{{.Version}}' 2>/dev/null)" || die "helm: $binary does not run"
  [ "$printed" = "v$HELM_VERSION" ] || die "helm: $binary reports $printed, expected v$HELM_VERSION"
  log "helm: $printed"
  out SVC_HELM "$binary"
}

build_helm() {
  local dir="$1"
  [ -x "$dir/bin/helm" ] && return 0
  # Render for the Kubernetes minor the tests run (helm's built-in default is 1.20).
  local kube_minor="${KUBE_VERSION#*.}"; kube_minor="${kube_minor%%.*}"
  local ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  local pkg
  for pkg in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
    ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kube_minor"
  done
  log "helm: building v$HELM_VERSION from the Go module"
  mkdir -p "$dir/bin"
  GOBIN="$dir/bin" CGO_ENABLED=0 GOFLAGS= quiet go install -trimpath -ldflags "$ldflags" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION" || die "helm: build of v$HELM_VERSION failed (see the log above)"
}

# ---------------------------------------------------------------------------------------------
# The test cluster (test/infra/cluster.sh): the node's Kubernetes binaries (built as kube-apiserver is),
# containerd, runc, the CNI plugins and image tools from Debian, CoreDNS from its Go module, and the
# images no registry can give us (test/infra/images.sh base). kube-apiserver and etcd are `kube`'s.

provision_cluster() {
  [ "$(id -u)" = 0 ] || die "cluster: needs root (containerd, network namespaces, cgroups, buildah)"
  local pkg missing=()
  for pkg in $CLUSTER_DEB_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
  # The control plane: kube-apiserver and etcd, as `kube` provides them.
  provision_kube

  local dir="$cache_root/kube-node-$KUBE_VERSION" cmd
  local commands=(kubelet kube-controller-manager kube-scheduler kube-proxy)
  for cmd in "${commands[@]}"; do
    if [ ! -x "$dir/bin/$cmd" ]; then
      need go "building the Kubernetes node binaries"
      with_lock "$dir" build_kube_node "$dir" "${commands[@]}"
      break
    fi
  done
  local reported
  for cmd in "${commands[@]}"; do
    reported="$("$dir/bin/$cmd" --version 2>/dev/null)" || die "cluster: $dir/bin/$cmd does not run"
    [ "$reported" = "Kubernetes v$KUBE_VERSION" ] || die "cluster: $cmd reports $reported, not v$KUBE_VERSION"
  done
  log "cluster: kubelet, kube-controller-manager, kube-scheduler, kube-proxy v$KUBE_VERSION"
  out SVC_KUBE_NODE_BIN "$dir/bin"

  # The k8s.io/kubernetes module's folder: pause.c and the CoreDNS manifest come from it.
  local source
  source="$(GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -d "$source/build/pause" ] || die "cluster: could not download k8s.io/kubernetes@v$KUBE_VERSION's source"
  out SVC_KUBE_SOURCE "$source"
  export SVC_KUBE_SOURCE="$source"

  # Keyed by the plugin list too: another list is another build.
  local coredns_dir="$cache_root/coredns-$COREDNS_VERSION-$(printf '%s' "$COREDNS_PLUGINS" | sha256sum | cut -c1-8)"
  local coredns="$coredns_dir/bin/coredns"
  if [ ! -x "$coredns" ]; then
    need go "building CoreDNS"
    with_lock "$coredns_dir" build_coredns "$coredns_dir"
  fi
  "$coredns" -version >/dev/null 2>&1 || die "cluster: $coredns does not run"
  out SVC_COREDNS "$coredns"
  export SVC_COREDNS="$coredns"

  local images
  images="$(bash "$here/images.sh" base)" || die "cluster: building the base images failed (see the log above)"
  printf '%s\n' "$images"
}

build_kube_node() {
  local dir="$1"; shift
  local cmd
  for cmd in "$@"; do [ -x "$dir/bin/$cmd" ] || { build_kube_commands "$dir" "$@"; return; }; done
}

# CoreDNS with the plugins the cluster's Corefile uses only (Kubernetes's addon manifest, cluster.sh), from
# a wrapper module: the stock build compiles every plugin's SDK (AWS, Azure, Google Cloud, etcd, dnstap,
# tracing), most of its cold build time.
COREDNS_PLUGINS="errors health ready kubernetes metrics cache reload loadbalance"

build_coredns() {
  local dir="$1"
  [ -x "$dir/bin/coredns" ] && return 0
  log "coredns: building v$COREDNS_VERSION from the Go module (plugins: $COREDNS_PLUGINS)"
  local mod="$dir/wrapper" plugin
  rm -rf "$mod"; mkdir -p "$mod" "$dir/bin"
  {
    echo '// CoreDNS with the plugins of the test cluster'"'"'s Corefile (test/infra/provision.sh).'
    echo 'package main'
    echo 'import ('
    echo '	"github.com/coredns/coredns/coremain"'
    for plugin in $COREDNS_PLUGINS; do echo "	_ \"github.com/coredns/coredns/plugin/$plugin\""; done
    echo ')'
    echo 'func main() { coremain.Run() }'
  } >"$mod/main.go"
  (
    cd "$mod"
    export GOFLAGS=-mod=mod GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
    quiet go mod init svc.test/coredns-build
    quiet go get "github.com/coredns/coredns@v$COREDNS_VERSION"
    CGO_ENABLED=0 quiet go build -trimpath -o "$dir/bin/coredns.tmp" \
      -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=v$COREDNS_VERSION" .
  ) || die "coredns: build of v$COREDNS_VERSION failed (see the log above)"
  mv "$dir/bin/coredns.tmp" "$dir/bin/coredns"
  rm -rf "$mod"
}

# ---------------------------------------------------------------------------------------------
# DataHub's Python client (acryl-datahub from PyPI), one virtualenv per pinned version

provision_datahub() {
  need python3 "the DataHub client virtualenvs"
  local v dir bins=()
  for v in $DATAHUB_CLI_VERSIONS; do
    dir="$cache_root/datahub-$v"
    if [ ! -x "$dir/bin/datahub" ]; then
      with_lock "$dir" build_datahub "$dir" "$v"
    fi
    local printed
    printed="$("$dir/bin/python" -c 'import importlib.metadata as m; print(m.version("acryl-datahub"))' 2>/dev/null)" || die "datahub: $dir does not run"
    [ "$printed" = "$v" ] || die "datahub: $dir holds acryl-datahub $printed, expected $v"
    # A virtualenv made before an extra was wanted (or with an older list) is completed, not taken as is.
    local missing
    missing="$(datahub_missing "$dir" "$v")" || exit 1
    [ -z "$missing" ] || with_lock "$dir" complete_datahub "$dir" "$v"
    log "datahub: acryl-datahub $printed with [$DATAHUB_CLI_EXTRAS]"
    bins+=("$dir/bin")
  done
  # Space-separated bin directories, in the order of DATAHUB_CLI_VERSIONS.
  out SVC_DATAHUB_BINS "${bins[*]}"
}

build_datahub() {
  local dir="$1" version="$2"
  [ -x "$dir/bin/datahub" ] && return 0
  log "datahub: pip install acryl-datahub==$version into $dir"
  rm -rf "$dir"
  quiet python3 -m venv "$dir" || die "datahub: python3 -m venv failed"
  quiet "$dir/bin/pip" install -q --disable-pip-version-check "acryl-datahub==$version" \
    || { rm -rf "$dir"; die "datahub: pip install acryl-datahub==$version failed (see the log above)"; }
}

# Prints the requirements of DATAHUB_CLI_EXTRAS that the virtualenv lacks (nothing when it is complete),
# read from the installed acryl-datahub's own metadata, as DATAHUB_CLI_EXTRAS_LEFT_OUT and _PINNED adjust them.
datahub_missing() {
  local dir="$1" version="$2" args=() names pins name pin
  mapfile -t names < <(tr ' ' '\n' <<<"${DATAHUB_CLI_EXTRAS_LEFT_OUT:-}" | sed -n "s#^$version=##p" | tr ',' '\n')
  mapfile -t pins < <(tr ' ' '\n' <<<"${DATAHUB_CLI_EXTRAS_PINNED:-}" | sed -n "s#^$version=##p")
  for name in "${names[@]}"; do args+=(--leave-out "$name"); done
  for pin in "${pins[@]}"; do args+=(--pin "$pin"); done
  "$dir/bin/python" "$here/datahub-missing-requirements.py" "${DATAHUB_CLI_EXTRAS// /,}" "${args[@]}" \
    || die "datahub: could not read the requirements of acryl-datahub $version's extras in $dir"
}

complete_datahub() {
  local dir="$1" version="$2" missing requirements
  missing="$(datahub_missing "$dir" "$version")" || exit 1
  [ -z "$missing" ] && return 0
  log "datahub: pip install acryl-datahub==$version's [$DATAHUB_CLI_EXTRAS] into $dir: $(tr '\n' ' ' <<<"$missing")"
  mapfile -t requirements <<<"$missing"
  # The client is named too, pinned, so that nothing the extras bring may replace it.
  quiet "$dir/bin/pip" install -q --disable-pip-version-check "acryl-datahub==$version" "${requirements[@]}" \
    || die "datahub: pip install of acryl-datahub==$version's [$DATAHUB_CLI_EXTRAS] failed (see the log above)"
  missing="$(datahub_missing "$dir" "$version")" || exit 1
  [ -z "$missing" ] || die "datahub: $dir still lacks $(tr '\n' ' ' <<<"$missing")after pip install"
}

# ---------------------------------------------------------------------------------------------
# Main

components=("$@")
[ ${#components[@]} -eq 0 ] && components=(postgres opensearch kube helm datahub cluster)
for c in "${components[@]}"; do
  case "$c" in
    postgres | opensearch | kube | helm | datahub | cluster) ;;
    *) die "unknown component '$c' (expected postgres, opensearch, kube, helm, datahub or cluster)" ;;
  esac
done
for c in "${components[@]}"; do
  start=$SECONDS
  "provision_$c"
  log "$c ready in $((SECONDS - start)) s"
done
