#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine, with svc's image built and loaded: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, a kubelet on containerd (runc), pod networking
# by the CNI plugins (bridge, host-local, portmap, loopback), Services by kube-proxy (iptables), cluster
# DNS by CoreDNS, and a default StorageClass of local volumes.
#
#   bash test/infra/cluster.sh up   [--name NAME]   start it; prints KUBECONFIG=… and SVC_IMAGE=…
#   bash test/infra/cluster.sh down [--name NAME]   stop it and remove everything it made
#   bash test/infra/cluster.sh status [--name NAME]
#
# NAME (default `dev`, [a-z0-9]{1,8}) tells clusters apart: several run side by side. Each lives in a
# network namespace of its own (svc-NAME), so its ports, bridge, routes and iptables rules are its own; the
# machine sees only a veth pair whose far end, the node's address, is where the API server listens. Its
# files are under ${SVC_CLUSTER_ROOT:-/var/lib/svc-cluster}/NAME (etcd's on /dev/shm), its processes in
# the cgroups svc-NAME (pods) and svc-NAME-system (the daemons). Needs root.
#
# On success `up` prints, one per line: KUBECONFIG, SVC_IMAGE (<repository>:<tag>, what the chart's
# image.repository and image.tag take), SVC_IMAGE_REPOSITORY, SVC_IMAGE_TAG, KUBE_APISERVER_URL,
# SVC_CLUSTER_NAME, SVC_CLUSTER_DIR, SVC_CLUSTER_NETNS and SVC_CLUSTER_NODE_IP. Logs go to stderr and
# to SVC_CLUSTER_DIR/logs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

# fd 4: the script's own stderr, for messages from checks whose output wait_for silences. Every process
# that outlives the script closes it (4>&-), or the caller reading our stderr would wait for it forever.
exec 4>&2
log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: %s\n' "$*" >&2; exit 1; }
out() { printf '%s=%s\n' "$1" "$2"; }

command="${1:-}"; shift || true
name="${SVC_CLUSTER_NAME:-dev}"
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    --name=*) name="${1#--name=}"; shift ;;
    *) die "unknown argument $1" ;;
  esac
done
[[ "$name" =~ ^[a-z0-9]{1,8}$ ]] || die "name '$name' must be 1-8 of [a-z0-9]"
[ "$(id -u)" = 0 ] || die "the cluster needs root (network namespaces, cgroups, containerd)"

root="${SVC_CLUSTER_ROOT:-/var/lib/svc-cluster}/$name"
etcd_dir="/dev/shm/svc-cluster-$name-etcd"
netns="svc-$name"
host_if="svch-$name"
cg_pods="svc-$name"
cg_system="svc-$name-system"
node_name=svc-node

# Inside the namespace every cluster uses the same addresses: they are reached from nowhere else.
service_cidr=10.96.0.0/16
kubernetes_service_ip=10.96.0.1
dns_service_ip=10.96.0.10
cluster_cidr=10.244.0.0/16
pod_subnet=10.244.0.0/24
cluster_domain=cluster.local

# Controllers of the cgroup v1 hierarchies the machine mounts (the kubelet and runc use cgroupfs).
cgroup_controllers() {
  local d
  for d in /sys/fs/cgroup/*/; do
    d="${d%/}"
    [ -f "$d/cgroup.procs" ] && echo "${d##*/}"
  done
}

# The kernel settings the kubelet sets at start (it refuses to run without them): they are the machine's,
# not the namespace's. The first cluster up saves them, the last one down puts them back.
clusters_root="${SVC_CLUSTER_ROOT:-/var/lib/svc-cluster}"
kernel_tunables=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

save_kernel_tunables() {
  mkdir -p "$clusters_root"
  (
    flock 9
    [ -f "$clusters_root/.kernel-tunables" ] || sysctl -e "${kernel_tunables[@]}" >"$clusters_root/.kernel-tunables"
  ) 9>"$clusters_root/.lock"
}

# The node's image store: containerd's root, with the images imported and unpacked. Loading them is most of
# a warm `up` (about 1 GB read, checked and unpacked), so `down` keeps the store, emptied of containers, for
# the next `up`, as a node's disk keeps its images across a reboot. One cluster holds it at a time (taken
# and given back by a rename); a cluster starting while another holds it imports the images into its own.
image_store="$clusters_root/.images"

take_image_store() {
  mkdir -p "$root/containerd"
  [ -f "$image_store/svc-clean" ] || return 0
  if mv -T "$image_store" "$root/containerd/root" 2>/dev/null; then
    rm -f "$root/containerd/root/svc-clean"
    log "the node's image store of an earlier cluster taken"
  fi
}

# After containerd stopped and the mounts are gone: the store goes back, unless another cluster's is there.
give_back_image_store() {
  local store="$root/containerd/root"
  [ "${store_clean:-}" = 1 ] && [ -d "$store" ] || return 0
  [ -z "$(awk -v p="$store/" 'index($2, p) == 1 { print $2 }' /proc/self/mounts)" ] || return 0
  # containerd's CRI keeps a folder per container it made (hosts, resolv.conf); none is left to use them.
  rm -rf "$store/io.containerd.grpc.v1.cri/containers" "$store/io.containerd.grpc.v1.cri/sandboxes"
  touch "$store/svc-clean"
  mv -T "$store" "$image_store" 2>/dev/null || rm -f "$store/svc-clean"
}

restore_kernel_tunables() {
  [ -d "$clusters_root" ] || return 0
  (
    flock 9
    local other
    other="$(find "$clusters_root" -mindepth 1 -maxdepth 1 -type d ! -name "$name" ! -name '.*' | head -1)"
    if [ -z "$other" ] && [ -f "$clusters_root/.kernel-tunables" ]; then
      sysctl -q -p "$clusters_root/.kernel-tunables" || log "could not restore the kernel settings of $clusters_root/.kernel-tunables"
      rm -f "$clusters_root/.kernel-tunables"
    fi
  ) 9>"$clusters_root/.lock"
}

# ---------------------------------------------------------------------------------------------
# down

# Every process in the cluster's cgroups (its daemons, containerd's shims, the pods' containers).
cluster_pids() {
  local c dir
  for c in $(cgroup_controllers); do
    for dir in "/sys/fs/cgroup/$c/$cg_system" "/sys/fs/cgroup/$c/$cg_pods"; do
      [ -d "$dir" ] && find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null
    done
  done | sort -un
}

# stop_daemons NAME…: SIGTERM to them all at once, SIGKILL to those still there 5 s later.
stop_daemons() {
  local d pids=()
  for d in "$@"; do
    [ -f "$root/pids/$d.pid" ] && pids+=("$(cat "$root/pids/$d.pid")")
    rm -f "$root/pids/$d.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local i pid alive
  for i in $(seq 1 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 1 ] || break
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

# CPU time the cluster's processes used (daemons and pods), in seconds: what the cluster cost, whatever
# else the machine was running.
cpu_seconds() {
  local total=0 dir
  for dir in "/sys/fs/cgroup/cpuacct/$cg_system" "/sys/fs/cgroup/cpuacct/$cg_pods"; do
    [ -f "$dir/cpuacct.usage" ] && total=$((total + $(cat "$dir/cpuacct.usage")))
  done
  echo $((total / 1000000000))
}

down() {
  log "stopping cluster $name (its processes used $(cpu_seconds) s of CPU)"
  local store_clean=0 start_down=$SECONDS
  # The kubelet first, so that nothing restarts the containers; then containerd's tasks, deleted through
  # containerd (their shims then remove their sockets and runc its state); then the rest.
  stop_daemons kubelet
  if running containerd; then
    local ctr=(ctr --address "$root/containerd.sock" -n k8s.io) task
    for task in $(timeout 10 "${ctr[@]}" tasks ls -q 2>/dev/null); do timeout 5 "${ctr[@]}" tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true; done
    for task in $(timeout 10 "${ctr[@]}" tasks ls -q 2>/dev/null); do timeout 10 "${ctr[@]}" tasks delete --force "$task" >/dev/null 2>&1 || true; done
    # The containers (the pods' sandboxes too) and their writable layers removed, the images kept: a store
    # with no container left is given back for the next cluster.
    local container remaining
    for container in $(timeout 10 "${ctr[@]}" containers ls -q 2>/dev/null); do timeout 10 "${ctr[@]}" containers rm "$container" >/dev/null 2>&1 || true; done
    remaining="$(timeout 10 "${ctr[@]}" containers ls -q 2>/dev/null)" && [ -z "$remaining" ] && store_clean=1
  fi
  stop_daemons kube-proxy kube-scheduler kube-controller-manager containerd kube-apiserver etcd
  # What remains in the cluster's cgroups: the containers and containerd's shims.
  local pids tries=0
  while pids="$(cluster_pids)"; [ -n "$pids" ] && [ $tries -lt 50 ]; do
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $pids 2>/dev/null || true
    tries=$((tries + 1)); sleep 0.1
  done
  [ -z "$(cluster_pids)" ] || log "processes left in the cluster's cgroups: $(cluster_pids | tr '\n' ' ')"
  # Mounts under the cluster's folder (volumes, container root file systems, pod network namespaces), deepest first.
  if [ -d "$root" ]; then
    local m
    for m in $(awk -v p="$root/" 'index($2, p) == 1 { print $2 }' /proc/self/mounts | sort -r); do
      umount -l "$m" 2>/dev/null || log "could not unmount $m"
    done
    [ -z "$(awk -v p="$root" '$2 == p { print }' /proc/self/mounts)" ] || umount -l "$root" 2>/dev/null || true
    give_back_image_store
  fi
  ip netns del "$netns" 2>/dev/null || true
  ip link del "$host_if" 2>/dev/null || true
  local c dir
  for c in $(cgroup_controllers); do
    for dir in "/sys/fs/cgroup/$c/$cg_pods" "/sys/fs/cgroup/$c/$cg_system"; do
      [ -d "$dir" ] && find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
    done
  done
  # The unpacked images are the bulk of it, slow to delete on a busy disk: moved aside at once (a new
  # cluster of the same name may start), deleted in the background.
  if [ -d "$root" ]; then
    local trash="$clusters_root/.removing-$name-$$"
    if mv "$root" "$trash"; then
      setsid rm -rf "$trash" </dev/null >/dev/null 2>&1 4>&- &
    else
      rm -rf "$root"
    fi
  fi
  rm -rf "$etcd_dir"
  restore_kernel_tunables
  log "cluster $name removed in $((SECONDS - start_down)) s"
}

# ---------------------------------------------------------------------------------------------
# up

# The /30 between the machine and the namespace: 100.64.N.0 (shared address space, never routed here),
# N from the name, the next free one if another cluster holds it.
pick_link_subnet() {
  local n
  n=$(( (0x$(printf '%s' "$name" | sha256sum | cut -c1-4) % 250) + 1 ))
  local tries
  for tries in $(seq 1 250); do
    if ! ip -4 addr show | grep -q "inet 100\.64\.$n\."; then echo "$n"; return 0; fi
    n=$(( n % 250 + 1 ))
  done
  die "no free 100.64.N.0/30 for the cluster's link"
}

setup_network() {
  ip netns add "$netns" || die "ip netns add $netns failed (does cluster $name exist? cluster.sh down --name $name)"
  local n; n="$(pick_link_subnet)"
  host_ip="100.64.$n.1"; node_ip="100.64.$n.2"
  ip link add "$host_if" type veth peer name eth0 netns "$netns"
  ip addr add "$host_ip/30" dev "$host_if"
  ip link set "$host_if" up
  ip -n "$netns" link set lo up
  ip -n "$netns" addr add "$node_ip/30" dev eth0
  ip -n "$netns" link set eth0 up
  # No default route: pods reach the node, each other and Services, nothing outside the namespace.
  in_netns sysctl -qw net.ipv4.ip_forward=1
  # Pod-to-Service traffic between pods on the bridge goes through iptables (kube-proxy's rules).
  in_netns sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1
  echo "$node_ip" >"$root/node-ip"
}

in_netns() { nsenter --net="/run/netns/$netns" -- "$@"; }

make_cgroups() {
  local c dir
  for c in $(cgroup_controllers); do
    for dir in "/sys/fs/cgroup/$c/$cg_pods" "/sys/fs/cgroup/$c/$cg_system"; do
      mkdir -p "$dir"
      if [ "$c" = cpuset ]; then
        cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$dir/cpuset.cpus"
        cat /sys/fs/cgroup/cpuset/cpuset.mems >"$dir/cpuset.mems"
      fi
    done
  done
}

# start NAME BINARY ARGS…: a daemon in the cluster's namespace and system cgroups, in a session of its own
# (it outlives this script), its output in logs/NAME.log, its pid in pids/NAME.pid.
start() {
  local daemon="$1"; shift
  local c cgs=()
  for c in $(cgroup_controllers); do cgs+=("/sys/fs/cgroup/$c/$cg_system/cgroup.procs"); done
  # The wrapper joins the cgroups, then becomes the daemon (exec), so the pid is the daemon's.
  setsid bash -c 'for f in "${@:2:$1}"; do echo $$ >"$f"; done; shift $(($1 + 1)); exec "$@"' _ \
    "${#cgs[@]}" "${cgs[@]}" nsenter --net="/run/netns/$netns" -- "$@" \
    </dev/null >>"$root/logs/$daemon.log" 2>&1 4>&- &
  echo $! >"$root/pids/$daemon.pid"
}

running() { kill -0 "$(cat "$root/pids/$1.pid" 2>/dev/null || echo 0)" 2>/dev/null; }

# wait_for WHAT SECONDS DAEMON COMMAND…: until COMMAND succeeds, failing early (with the log) when DAEMON died.
wait_for() {
  local what="$1" seconds="$2" daemon="$3"; shift 3
  local deadline=$((SECONDS + seconds))
  while ! "$@" >/dev/null 2>&1; do
    if [ -n "$daemon" ] && ! running "$daemon"; then
      tail -n 30 "$root/logs/$daemon.log" >&2 || true
      die "$daemon exited while waiting for $what (log: $root/logs/$daemon.log)"
    fi
    [ $SECONDS -lt $deadline ] || { [ -n "$daemon" ] && tail -n 30 "$root/logs/$daemon.log" >&2; die "timed out after $seconds s waiting for $what"; }
    sleep 0.2
  done
}

pki() { printf '%s/pki/%s' "$root" "$1"; }

# The CA, the API server's serving certificate, one client certificate per component (each the identity
# the cluster's bootstrap RBAC names), the kubelet's serving certificate and the service-account keys.
make_certificates() {
  mkdir -p "$root/pki"; chmod 700 "$root/pki"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$(pki ca.key)" -out "$(pki ca.crt)" -days 30 -subj "/CN=svc-cluster-$name-ca" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
  sign() {
    local file="$1" subject="$2" usage="$3" san="${4:-}"
    openssl req -new "${ec[@]}" -keyout "$(pki "$file.key")" -out "$(pki "$file.csr")" -subj "$subject" 2>/dev/null
    {
      echo basicConstraints=CA:FALSE
      echo keyUsage=critical,digitalSignature,keyEncipherment
      echo "extendedKeyUsage=$usage"
      [ -n "$san" ] && echo "subjectAltName=$san"
    } >"$(pki "$file.ext")"
    openssl x509 -req -in "$(pki "$file.csr")" -CA "$(pki ca.crt)" -CAkey "$(pki ca.key)" -CAcreateserial \
      -days 30 -out "$(pki "$file.crt")" -extfile "$(pki "$file.ext")" 2>/dev/null
    rm -f "$(pki "$file.csr")" "$(pki "$file.ext")"
  }
  sign apiserver /CN=kube-apiserver serverAuth \
    "IP:$node_ip,IP:$kubernetes_service_ip,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$cluster_domain"
  sign admin /O=system:masters/CN=svc-cluster-admin clientAuth
  sign apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client clientAuth
  sign controller-manager /CN=system:kube-controller-manager clientAuth
  sign scheduler /CN=system:kube-scheduler clientAuth
  sign kubelet "/O=system:nodes/CN=system:node:$node_name" clientAuth
  sign kubelet-serving "/CN=$node_name" serverAuth "IP:$node_ip,DNS:$node_name"
  sign kube-proxy /CN=system:kube-proxy clientAuth
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$(pki sa.key)" 2>/dev/null
  openssl pkey -in "$(pki sa.key)" -pubout -out "$(pki sa.pub)" 2>/dev/null
}

kubeconfig() {
  local file="$1" user="$2" server="$3"
  local b64; b64() { base64 -w0 <"$1"; }
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: svc-$name
  cluster:
    server: $server
    certificate-authority-data: $(b64 "$(pki ca.crt)")
users:
- name: $user
  user:
    client-certificate-data: $(b64 "$(pki "$user.crt")")
    client-key-data: $(b64 "$(pki "$user.key")")
contexts:
- name: svc-$name
  context:
    cluster: svc-$name
    user: $user
    namespace: default
current-context: svc-$name
EOF
  chmod 600 "$file"
}

write_configs() {
  mkdir -p "$root/config" "$root/cni/net.d" "$root/cni/ipam"
  local api="https://$node_ip:6443"
  kubeconfig "$root/kubeconfig" admin "$api"
  local c
  for c in controller-manager scheduler kubelet kube-proxy; do kubeconfig "$root/config/$c.kubeconfig" "$c" "$api"; done

  cat >"$root/config/containerd.toml" <<EOF
version = 2
root = "$root/containerd/root"
state = "$root/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$root/containerd.sock"

[ttrpc]
  address = "$root/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$root/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:$PAUSE_VERSION"
  stream_server_address = "127.0.0.1"
  # The pods' network namespaces under the cluster's folder, so that down finds and removes them.
  netns_mounts_under_state_dir = true
  # Root here lacks CAP_SYS_RESOURCE, so no process may lower its oom_score_adj: runc failed every pod
  # sandbox (containerd asks -998) with "failed to update /proc/self/oom_score_adj: Permission denied".
  # Clamp the scores to containerd's own (0), as for rootless containerd.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$root/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$root/cni/net.d"
EOF

  cat >"$root/cni/net.d/10-svc.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "svc-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$pod_subnet" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$root/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF

  # Pods with dnsPolicy Default get this: there is no DNS server outside the cluster to forward to.
  printf 'search %s\n' "$cluster_domain" >"$root/config/resolv.conf"

  cat >"$root/config/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $(pki ca.crt) }
authorization: { mode: Webhook }
tlsCertFile: $(pki kubelet-serving.crt)
tlsPrivateKeyFile: $(pki kubelet-serving.key)
cgroupDriver: cgroupfs
cgroupRoot: /$cg_pods
containerRuntimeEndpoint: unix://$root/containerd.sock
clusterDomain: $cluster_domain
clusterDNS: [$dns_service_ip]
resolvConf: $root/config/resolv.conf
podLogsDir: $root/pod-logs
failSwapOn: false
# The images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# A shared disk filling up must not evict the tests' pods.
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1% }
serializeImagePulls: false
# A Secret or ConfigMap change reaches mounted volumes within seconds.
syncFrequency: 10s
EOF

  cat >"$root/config/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $root/config/kube-proxy.kubeconfig }
mode: iptables
hostnameOverride: $node_name
clusterCIDR: $cluster_cidr
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
# The conntrack table is the machine's (only the first namespace may size it): leave it as it is.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
iptables: { syncPeriod: 30s, minSyncPeriod: 0s }
EOF
}

start_control_plane() {
  # A folder left by a cluster of the same name that was not taken down would be its data.
  rm -rf "$etcd_dir"
  mkdir -p "$etcd_dir"
  start etcd "$SVC_ETCD" --name=default --data-dir="$etcd_dir/data" \
    --listen-client-urls=http://127.0.0.1:2379 --advertise-client-urls=http://127.0.0.1:2379 \
    --listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=default=http://127.0.0.1:2380 --logger=zap --log-level=warn
  start containerd containerd --config "$root/config/containerd.toml"
  wait_for "containerd" 30 containerd ctr --address "$root/containerd.sock" version
  load_images_start
  wait_for "etcd" 30 etcd in_netns curl -sf http://127.0.0.1:2379/health

  start kube-apiserver "$SVC_KUBE_APISERVER" \
    --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$node_ip" \
    --cert-dir="$root/pki" --tls-cert-file="$(pki apiserver.crt)" --tls-private-key-file="$(pki apiserver.key)" \
    --client-ca-file="$(pki ca.crt)" \
    --kubelet-client-certificate="$(pki apiserver-kubelet-client.crt)" --kubelet-client-key="$(pki apiserver-kubelet-client.key)" \
    --service-cluster-ip-range="$service_cidr" \
    --service-account-issuer="https://kubernetes.default.svc.$cluster_domain" \
    --service-account-key-file="$(pki sa.pub)" --service-account-signing-key-file="$(pki sa.key)" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --kubelet-preferred-address-types=InternalIP \
    --allow-privileged=true --profiling=false --v=1
  local curl_admin=(curl -sf --cacert "$(pki ca.crt)" --cert "$(pki admin.crt)" --key "$(pki admin.key)")
  wait_for "kube-apiserver /readyz" 120 kube-apiserver "${curl_admin[@]}" "https://$node_ip:6443/readyz"

  start kube-controller-manager "$SVC_KUBE_NODE_BIN/kube-controller-manager" \
    --kubeconfig="$root/config/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$root/config/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$root/config/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$(pki sa.key)" --root-ca-file="$(pki ca.crt)" \
    --cluster-signing-cert-file="$(pki ca.crt)" --cluster-signing-key-file="$(pki ca.key)" \
    --service-cluster-ip-range="$service_cidr" --cluster-cidr="$cluster_cidr" --allocate-node-cidrs=false \
    --profiling=false --v=1
  start kube-scheduler "$SVC_KUBE_NODE_BIN/kube-scheduler" \
    --kubeconfig="$root/config/scheduler.kubeconfig" \
    --authentication-kubeconfig="$root/config/scheduler.kubeconfig" \
    --authorization-kubeconfig="$root/config/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --profiling=false --v=1
}

# Loads the images into containerd in the background while the control plane starts: the small ones
# the node needs first (pause, CoreDNS), then Postgres and svc's (the slow part: their layers are read,
# checked and unpacked). An image store kept by an earlier cluster (take_image_store) has a record of the
# archives it holds: those are not loaded again, and every image of no archive of this cluster is removed
# (an earlier tree's svc, the tags tests added). images_loaded waits for them all.
load_images_start() {
  (
    local ctr=(ctr --address "$root/containerd.sock" -n k8s.io)
    local record="$root/containerd/root/svc-images" # lines: <archive file name> <image reference>
    local archives archive ref kept="" output
    archives=($(grep -E '/(pause|coredns)-' "$SVC_CLUSTER_IMAGES") - $(grep -vE '/(pause|coredns)-' "$SVC_CLUSTER_IMAGES") "$SVC_IMAGE_ARCHIVE")
    touch "$record"
    for archive in "${archives[@]}"; do
      [ "$archive" = - ] || kept+="$(awk -v a="${archive##*/}" '$1 == a' "$record")"$'\n'
    done
    printf '%s' "$kept" | sed '/^$/d' >"$record.new" && mv "$record.new" "$record"
    for ref in $("${ctr[@]}" images ls -q 2>/dev/null); do
      awk -v r="$ref" '$2 == r { found = 1 } END { exit !found }' "$record" || "${ctr[@]}" images rm --sync "$ref" >/dev/null 2>&1 || true
    done
    for archive in "${archives[@]}"; do
      if [ "$archive" = - ]; then touch "$root/images-node"; continue; fi
      awk -v a="${archive##*/}" '$1 == a { found = 1 } END { exit !found }' "$record" && continue
      output="$("${ctr[@]}" images import "$archive" 2>"$root/logs/images.log")" \
        || { echo "ctr images import $archive failed: $(cat "$root/logs/images.log")" >"$root/images-failed"; exit 1; }
      # ctr says `unpacking <reference> (sha256:…)...done` for each image of the archive.
      sed -n 's/^unpacking \([^ ]*\) (sha256:.*/\1/p' <<<"$output" | sed "s#^#${archive##*/} #" >>"$record"
    done
    touch "$root/images-all"
  ) &
  images_job=$!
}

# (wait_for silences its check: a failure is told on the script's own stderr, fd 4.)
images_ready() {
  if [ -e "$root/images-failed" ]; then printf 'cluster: %s\n' "$(cat "$root/images-failed")" >&4; exit 1; fi
  [ -e "$root/images-$1" ]
}

images_loaded() {
  local start=$SECONDS
  wait_for "the images loaded into containerd" 300 containerd images_ready all
  wait "$images_job" || die "loading the images failed"
  log "images loaded (the last $((SECONDS - start)) s after the cluster was ready)"
}

start_node() {
  start kubelet "$SVC_KUBE_NODE_BIN/kubelet" \
    --config="$root/config/kubelet.yaml" --kubeconfig="$root/config/kubelet.kubeconfig" \
    --root-dir="$root/kubelet" --cert-dir="$root/pki/kubelet" \
    --hostname-override="$node_name" --node-ip="$node_ip" --v=1
  start kube-proxy "$SVC_KUBE_NODE_BIN/kube-proxy" --config="$root/config/kube-proxy.yaml" --v=1
}

kubectl_admin() { kubectl --kubeconfig "$root/kubeconfig" "$@"; }

# What every cluster has: cluster DNS (Kubernetes's own CoreDNS manifest), a default StorageClass of local
# volumes (Retain: a volume is used once) and volumes for it.
apply_addons() {
  local manifest="$SVC_KUBE_SOURCE/cluster/addons/dns/coredns/coredns.yaml.base"
  [ -f "$manifest" ] || die "$manifest not found"
  # No upstream DNS server is reachable from the namespace: CoreDNS answers for the cluster only
  # (the `forward` block and the `loop` check, which needs an upstream, are left out).
  sed -e "s/__DNS__DOMAIN__/$cluster_domain/g" -e "s/__DNS__SERVER__/$dns_service_ip/g" \
    -e 's/__DNS__MEMORY__LIMIT__/170Mi/g' -e "s#registry.k8s.io/coredns/coredns:v[0-9.]*#registry.k8s.io/coredns/coredns:v$COREDNS_VERSION#" \
    -e '/forward \. \/etc\/resolv.conf {/,/}/d' -e '/^        loop$/d' "$manifest" >"$root/config/coredns.yaml"
  kubectl_admin apply -f "$root/config/coredns.yaml" >/dev/null

  local volumes="$root/volumes" i manifest_pv="$root/config/storage.yaml"
  {
    cat <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
    for i in $(seq 1 "${SVC_CLUSTER_VOLUMES:-8}"); do
      mkdir -p "$volumes/pv$i"
      cat <<EOF
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: local-pv$i
spec:
  capacity: { storage: 20Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local
  local: { path: $volumes/pv$i }
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions:
            - { key: kubernetes.io/hostname, operator: In, values: [$node_name] }
EOF
    done
  } >"$manifest_pv"
  kubectl_admin apply -f "$manifest_pv" >/dev/null
}

node_ready() {
  [ "$(kubectl_admin get node "$node_name" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

dns_ready() {
  [ "$(kubectl_admin -n kube-system get deployment coredns -o jsonpath='{.status.availableReplicas}' 2>/dev/null)" -ge 1 ] 2>/dev/null
}

default_service_account() { kubectl_admin -n default get serviceaccount default >/dev/null 2>&1; }

up() {
  [ -e "$root" ] && die "cluster $name exists ($root): cluster.sh down --name $name first"
  local start_all=$SECONDS
  # The binaries and the base images (cached), then svc's image from the tree (cached by content).
  if [ -z "${SVC_KUBE_NODE_BIN:-}" ] || [ -z "${SVC_CLUSTER_IMAGES:-}" ] || [ -z "${SVC_KUBE_APISERVER:-}" ] \
    || [ -z "${SVC_ETCD:-}" ] || [ -z "${SVC_KUBE_SOURCE:-}" ]; then
    local env
    env="$(bash "$here/provision.sh" kube cluster)" || die "provisioning failed (see the log above)"
    eval "$(sed -n 's/^\([A-Z_][A-Z0-9_]*\)=\(.*\)$/export \1="\2"/p' <<<"$env")"
  fi
  local img
  img="$(bash "$here/images.sh" svc)" || die "building the svc image failed (see the log above)"
  eval "$(sed -n 's/^\([A-Z_][A-Z0-9_]*\)=\(.*\)$/\1="\2"/p' <<<"$img")"
  log "binaries and images ready in $((SECONDS - start_all)) s"

  local start_cluster=$SECONDS
  mkdir -p "$root/logs" "$root/pids"
  # Anything failing from here on leaves nothing behind.
  # (SVC_CLUSTER_KEEP_FAILED=1 keeps it, with its logs, to look into.)
  trap 'code=$?; if [ $code -ne 0 ] && [ "${SVC_CLUSTER_KEEP_FAILED:-}" != 1 ]; then log "up failed: removing what it made"; down; fi' EXIT
  save_kernel_tunables
  make_cgroups
  setup_network
  make_certificates
  write_configs
  take_image_store
  start_control_plane
  wait_for "the pause and CoreDNS images" 120 containerd images_ready node
  start_node
  wait_for "node $node_name Ready" 120 kubelet node_ready
  apply_addons
  wait_for "CoreDNS available" 120 kubelet dns_ready
  wait_for "the default ServiceAccount" 60 kube-controller-manager default_service_account
  images_loaded
  trap - EXIT
  log "cluster $name up in $((SECONDS - start_cluster)) s ($((SECONDS - start_all)) s in all); logs in $root/logs"

  out KUBECONFIG "$root/kubeconfig"
  out SVC_IMAGE "$SVC_IMAGE"
  out SVC_IMAGE_REPOSITORY "${SVC_IMAGE%:*}"
  out SVC_IMAGE_TAG "${SVC_IMAGE##*:}"
  out KUBE_APISERVER_URL "https://$node_ip:6443"
  out SVC_CLUSTER_NAME "$name"
  out SVC_CLUSTER_DIR "$root"
  out SVC_CLUSTER_NETNS "$netns"
  out SVC_CLUSTER_NODE_IP "$node_ip"
}

status() {
  [ -d "$root" ] || { echo "cluster $name: not running"; return 1; }
  local d
  for d in etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if running "$d"; then echo "$d: running (pid $(cat "$root/pids/$d.pid"))"; else echo "$d: not running"; fi
  done
  kubectl_admin get nodes -o wide 2>&1 || true
}

case "$command" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: cluster.sh up|down|status [--name NAME]" ;;
esac
