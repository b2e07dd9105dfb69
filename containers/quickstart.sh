#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install, build, and run
# cephbench's rados workloads (4 KiB QD16 write / seq / rand with --verify,
# 4 KiB QD1 write, 4 MiB QD16 write) and two RBD jobs (4 KiB random writes at
# QD32 on a preconditioned image; 4 KiB writes with a flush after each).
#
#   bash containers/quickstart.sh                       # throwaway local cluster
#   CEPH_CONF=/etc/ceph/ceph.conf POOL=bench bash containers/quickstart.sh
#
# With CEPH_CONF set, that cluster's existing pool POOL is used (cephbench
# never creates pools there, and removes only its own objects). Without it, a
# throwaway cluster (1 mon, 1 mgr, 1 bluestore OSD on loopback) is started
# and stopped again. DURATION (default 10s) sets each job's length.
set -euo pipefail
cd "$(dirname "$0")/.."

bash containers/install-deps.sh
cargo build --release --quiet
B=$PWD/target/release/cephbench
D=${DURATION:-10s}

if [[ -n ${CEPH_CONF:-} ]]; then
    [[ -n ${POOL:-} ]] || { echo "quickstart: set POOL to an existing pool of that cluster" >&2; exit 2; }
else
    dir=/tmp/cephbench-quickstart
    trap 'bash containers/cluster.sh down --dir "$dir" >&2 || true' EXIT
    bash containers/cluster.sh up --dir "$dir" --name cbquick --osds 1 >/dev/null
    export CEPH_CONF=$dir/ceph.conf
    POOL=bench
    bash containers/cluster.sh pool create "$POOL" --dir "$dir" --app rbd >/dev/null
fi

run() { echo; echo "\$ cephbench $*"; "$B" "$@"; }
run rados write -p "$POOL" -b 4K -t 16 -d "$D" --ramp 2s --run-name quickstart --no-cleanup
run rados seq   -p "$POOL" -t 16 --run-name quickstart --verify
run rados rand  -p "$POOL" -t 16 -d "$D" --run-name quickstart --verify
run cleanup     -p "$POOL" --run-name quickstart
run rados write -p "$POOL" -b 4K -t 1 -d "$D" --ramp 2s
run rados write -p "$POOL" -b 4M -t 16 -d "$D" --ramp 2s
run rbd -p "$POOL" --size 1G --rw randwrite --bs 4K --iodepth 32 -d "$D" --ramp 2s
run rbd -p "$POOL" --size 1G --rw randwrite --bs 4K --fsync-every 1 -d "$D" --no-precondition
