#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install, build, and run
# cephbench: one detailed 4 KiB QD1 write run (the latency, where it went, the
# OSD), then examples/quickstart.toml as one table: rados bench's workloads
# (4 KiB QD16 write / seq / rand, every read checked; 4 MiB QD16 write) and two
# RBD jobs (4 KiB random writes at QD32 on a preconditioned image; 4 KiB
# writes with a flush after each).
#
#   bash containers/quickstart.sh [--container | --host]   # throwaway local cluster
#   CEPH_CONF=/etc/ceph/ceph.conf POOL=bench bash containers/quickstart.sh
#
# With CEPH_CONF set, that cluster's existing pool POOL is used (cephbench
# never creates pools there, and removes only its own objects). Without it, a
# throwaway cluster (1 mon, 1 mgr, 1 bluestore OSD on loopback) is started
# and stopped again: --container runs it in the image of containers/Containerfile
# (containers/image.sh builds it; cephbench runs on the host in the container's
# network namespace), --host runs the daemons on the host (containers/cluster.sh);
# the default is the container when podman works here, else the host. It says
# which. DURATION (default 10s) sets the detailed run's length; the suite's
# durations are in examples/quickstart.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=auto
case ${1:-} in
    --container) mode=container ;;
    --host) mode=host ;;
    "") ;;
    *) echo "usage: $0 [--container | --host]" >&2; exit 2 ;;
esac

bash containers/install-deps.sh
cargo build --release --quiet
B=$PWD/target/release/cephbench
D=${DURATION:-10s}
# shellcheck source=image.sh
source containers/image.sh
RUN=()  # how the client runs: as is, or in the container's network namespace

if [[ -n ${CEPH_CONF:-} ]]; then
    [[ -n ${POOL:-} ]] || { echo "quickstart: set POOL to an existing pool of that cluster" >&2; exit 2; }
    echo "quickstart: benchmarking the cluster of $CEPH_CONF, pool $POOL" >&2
else
    if [[ $mode == auto ]]; then
        if cb_podman_works; then mode=container; else mode=host; fi
    fi
    dir=/tmp/cephbench-quickstart
    POOL=bench
    if [[ $mode == container ]]; then
        echo "quickstart: throwaway cluster in a container (podman; --host for host daemons)" >&2
        name=cephbench-quickstart
        cb_podman rm -f "$name" >/dev/null 2>&1 || true
        trap 'cb_podman stop -t 60 "$name" >/dev/null 2>&1 || true; cb_podman rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
        image=$(bash containers/image.sh build)
        rm -rf "$dir" && mkdir -p "$dir"
        cb_podman run -d --name "$name" --init --network none "${CB_RUN_FLAGS[@]}" \
            -v "$dir:$dir" -e CEPHBENCH_DIR="$dir" -e CEPH_CONF="$dir/ceph.conf" "$image" --osds 1 >/dev/null
        for _ in $(seq 1 180); do
            cb_podman logs "$name" 2>/dev/null | grep -q '^export CEPH_CONF=' && break
            [[ $(cb_podman inspect -f '{{.State.Running}}' "$name") == true ]] ||
                { cb_podman logs "$name" >&2; exit 1; }
            sleep 1
        done
        cb_podman exec "$name" cluster.sh pool create "$POOL" --dir "$dir" --app rbd >/dev/null
        RUN=(nsenter -t "$(cb_podman inspect -f '{{.State.Pid}}' "$name")" -n)
    else
        echo "quickstart: throwaway cluster of host daemons (containers/cluster.sh)" >&2
        trap 'bash containers/cluster.sh down --dir "$dir" >&2 || true' EXIT
        bash containers/cluster.sh up --dir "$dir" --name cbquick --osds 1 >/dev/null
        bash containers/cluster.sh pool create "$POOL" --dir "$dir" --app rbd >/dev/null
    fi
    export CEPH_CONF=$dir/ceph.conf
fi

run() { echo; echo "\$ cephbench $*"; "${RUN[@]}" "$B" "$@"; }
# One detailed run: how long one 4 KiB sync write takes and where the time went.
run rados write -p "$POOL" -b 4K -t 1 -d "$D" --ramp 2s
# Then rados bench's and fio's workloads as one table (examples/quickstart.toml).
run suite examples/quickstart.toml -p "$POOL"
