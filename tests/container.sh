#!/usr/bin/env bash
# The container job: CI against the containerized single-node Ceph of containers/Containerfile.
#
#   bash tests/container.sh [--cold] [--keep-image]
#
# 1. builds the cluster image (containers/image.sh: base image present / pulled / debootstrapped +
#    imported; --cold removes both images first, as on a fresh machine);
# 2. starts it (1 mon, 1 mgr, 1 bluestore OSD) with --network none: the daemons bind 127.0.0.10
#    etc. on the container's own loopback; the cluster directory is bind-mounted at the same path
#    on both sides, so the host has ceph.conf and the keyring;
# 3. runs the host's cephbench (target/debug, built by tests/run.sh; CEPHBENCH_BIN overrides) in
#    the container's network namespace (nsenter -n: the host's filesystem and binary): rados
#    write / seq --verify / rand --verify, cleanup, an rbd job, a short `suite cdm`; then checks
#    with rados ls / rbd ls inside the container that no cephbench_* object or image is left;
# 4. stops and removes the container and checks that nothing is left behind: no ceph-* process
#    of the cluster directory, no mount of it or of the container, no netns of podman's left (the
#    container's own netns gone, its pid gone), no container of that name; then the same check for the host daemons'
#    `cluster.sh down`.
# Every step is bounded by timeout; each phase's wall time is printed. On failure the container's
# logs and the daemons' log tails are printed. Needs root and podman (containers/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../containers/image.sh
source containers/image.sh

cold=0
keep_image=1
for a in "$@"; do
    case $a in
        --cold) cold=1 ;;
        --no-keep-image) keep_image=0 ;;
        *) echo "usage: $0 [--cold] [--no-keep-image]" >&2; exit 2 ;;
    esac
done

B=${CEPHBENCH_BIN:-$PWD/target/debug/cephbench}
[[ -x $B ]] || cargo build --quiet --bin cephbench
NAME=cephbench-ci
DIR=/tmp/cephbench-ctr
POOL=bench
T0=$(cb_now)
phase_t=$(cb_now)
phase() { echo "container-job: $1: $(cb_since "$phase_t") s" >&2; phase_t=$(cb_now); }
fail() { echo "container-job: FAILED: $*" >&2; exit 1; }

# Named network namespaces podman makes (netns-<uuid>); other clusters' own netns may come and go.
podman_netns() { ip netns list 2>/dev/null | awk '$1 ~ /^netns-/ {print $1}' | sort | tr '\n' ' '; }
netns_before=$(podman_netns)

dump_logs() {
    echo "---- podman logs $NAME (tail) ----" >&2
    cb_podman logs --tail 60 "$NAME" >&2 2>&1 || true
    local f
    for f in "$DIR"/log/*.log; do
        [[ -f $f ]] || continue
        echo "---- $f (tail) ----" >&2
        tail -n 20 "$f" >&2
    done
}
stop_container() {
    timeout 90 podman "${CB_PODMAN_FLAGS[@]}" stop -t 60 "$NAME" >/dev/null 2>&1 || true
    timeout 60 podman "${CB_PODMAN_FLAGS[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
}
on_exit() {
    local rc=$?
    if ((rc != 0)); then
        dump_logs
        stop_container
    fi
    rm -rf "$DIR"
    exit "$rc"
}
trap on_exit EXIT

# ---- image ------------------------------------------------------------------------------------
stop_container
rm -rf "$DIR"
if ((cold)); then
    cb_podman rmi -f "$(cb_image_tag)" >/dev/null 2>&1 || true
    cb_podman rmi -f "$CB_BASE" >/dev/null 2>&1 || true
    phase "--cold: cached images removed"
fi
IMAGE=$(timeout 900 bash containers/image.sh build)
phase "image ($IMAGE)"

# ---- cluster up -------------------------------------------------------------------------------
mkdir -p "$DIR"
timeout 60 podman "${CB_PODMAN_FLAGS[@]}" run -d --name "$NAME" --init --network none \
    "${CB_RUN_FLAGS[@]}" -v "$DIR:$DIR" -e CEPHBENCH_DIR="$DIR" -e CEPH_CONF="$DIR/ceph.conf" \
    "$IMAGE" --osds 1 >/dev/null
up=0
for _ in $(seq 1 180); do
    if cb_podman logs "$NAME" 2>/dev/null | grep -q '^export CEPH_CONF='; then
        up=1
        break
    fi
    [[ $(cb_podman inspect -f '{{.State.Running}}' "$NAME" 2>/dev/null) == true ]] ||
        fail "the container exited during cluster.sh up"
    sleep 1
done
((up)) || fail "cluster not up within 180 s"
PID=$(cb_podman inspect -f '{{.State.Pid}}' "$NAME")
SANDBOX=$(cb_podman inspect -f '{{.NetworkSettings.SandboxKey}}' "$NAME" 2>/dev/null || true)
timeout 180 podman "${CB_PODMAN_FLAGS[@]}" exec "$NAME" \
    cluster.sh pool create "$POOL" --dir "$DIR" --app rbd >/dev/null
phase "cluster up (1 mon, 1 mgr, 1 OSD) + pool"

# ---- the job, from the host in the container's network namespace -------------------------------
export CEPH_CONF=$DIR/ceph.conf
cb() {
    echo "\$ cephbench $*" >&2
    timeout 120 nsenter -t "$PID" -n "$B" "$@" --progress never >"$DIR/out.txt" 2>&1 ||
        { cat "$DIR/out.txt" >&2; fail "cephbench $*"; }
    tail -n 3 "$DIR/out.txt" | sed 's/^/    /' >&2
}
cb rados write -p "$POOL" -b 4K -t 16 -d 5s --run-name ci --no-cleanup
cb rados seq -p "$POOL" -t 16 --run-name ci --verify
cb rados rand -p "$POOL" -t 16 -d 5s --run-name ci --verify
cb cleanup -p "$POOL" --run-name ci
cb rbd -p "$POOL" --size 256M --rw randwrite --bs 4K --iodepth 16 -d 5s --no-precondition
cb suite cdm -p "$POOL" --runs 1 --runtime 2s --ramp 0s --image-size 256M --test-area 256M
left=$(timeout 60 podman "${CB_PODMAN_FLAGS[@]}" exec "$NAME" \
    sh -c "rados -p $POOL ls; rbd -p $POOL ls" | grep '^cephbench_' || true)
[[ -z $left ]] || fail "cephbench left objects/images behind: $(echo "$left" | head -5 | tr '\n' ' ')"
phase "container job (rados write/seq/rand --verify, cleanup, rbd, suite cdm; nothing left)"

# ---- teardown and the leftovers check ----------------------------------------------------------
timeout 90 podman "${CB_PODMAN_FLAGS[@]}" stop -t 60 "$NAME" >/dev/null
timeout 60 podman "${CB_PODMAN_FLAGS[@]}" rm "$NAME" >/dev/null
phase "teardown (podman stop + rm)"

leftovers() { # $1: cluster directory
    local p out=""
    for p in /proc/[0-9]*; do
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "-c $1/ceph.conf" &&
            out+="process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" | cut -c1-80); "
    done
    grep -F " $1" /proc/self/mountinfo >/dev/null && out+="mounts under $1; "
    echo "$out"
}
left=$(leftovers "$DIR")
grep -qF "$NAME" <(cb_podman ps -a --format '{{.Names}}') && left+="container $NAME; "
grep -q "/containers/vfs" /proc/self/mountinfo && left+="a container rootfs still mounted; "
netns_after=$(podman_netns)
[[ $netns_after == "$netns_before" ]] || left+="podman netns changed: '$netns_before' -> '$netns_after'; "
[[ -z $SANDBOX || ! -e $SANDBOX ]] || left+="the container's netns $SANDBOX; "
kill -0 "$PID" 2>/dev/null && left+="the container's pid $PID; "
[[ -z $left ]] || fail "left behind after podman stop: $left"
echo "container-job: podman stop leaves no daemon, mount, netns or container behind" >&2

# The host daemons' `cluster.sh down` (loopback + netns variants are used by the other tests;
# this checks the netns one, the one with the most to remove), in a subnet of its own.
HD=/tmp/cephbench-downcheck
bash containers/cluster.sh down --dir "$HD" >/dev/null 2>&1 || true
timeout 180 bash containers/cluster.sh up --netns --subnet 198.51.103 --name cbdown --dir "$HD" \
    --osds 1 --objectstore memstore >/dev/null
timeout 120 bash containers/cluster.sh down --dir "$HD" >/dev/null
left=$(leftovers "$HD")
[[ -d $HD ]] && left+="$HD still there; "
ip netns list | grep -qw cbdown && left+="netns cbdown; "
ip link show cb-cbdown >/dev/null 2>&1 && left+="veth cb-cbdown; "
[[ -z $left ]] || fail "left behind after cluster.sh down: $left"
phase "host cluster.sh up --netns + down leaves nothing behind"

((keep_image)) || cb_podman rmi -f "$IMAGE" "$CB_BASE" >/dev/null 2>&1 || true
echo "container-job: ok, total $(cb_since "$T0") s" >&2
