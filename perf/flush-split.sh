#!/usr/bin/env bash
# perf/flush-split.sh - does the split put a drive's slower flush where it belongs?
#
#   perf/flush-split.sh [--bs 4K|4M|...] [--pairs N] [--secs S] [--us DELAY] [--dir DIR] [--op-history]
#
# Starts a throwaway cluster of 3 bluestore OSDs, each under the slow-flush shim
# (tools/slowflush: every fsync/fdatasync of the OSD takes DELAY µs longer), in its own
# network namespace (name cbflush, subnet 198.51.108, dir /tmp/cbflush-cluster), makes a
# size-3 pool, and runs QD1 writes of --bs in pairs: the flush delay off, then DELAY on
# every OSD (default 3000 µs). Prints, per pair and as medians, how far the client's
# mean rose, which share of that rise landed in the device-flush share, how far OSD
# local moved (against its range over the undelayed runs), and the queue and
# unattributed shares. Stops the cluster at exit. Runs the debug binary as `cargo build`
# leaves it. Keep DIR on a disk: in RAM (/dev/shm) a few large-block runs fill memory,
# as bluestore does not give a removed object's space back to the file.
set -euo pipefail
cd "$(dirname "$0")/.."

bs=4K pairs=5 secs=8 us=3000 dir=/tmp/cbflush-cluster extra=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --bs) bs=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --us) us=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --op-history) extra=(--op-history 20000); shift ;;
        *) echo "flush-split.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
    esac
done
bin=target/debug/cephbench
[[ -x $bin ]] || { echo "flush-split.sh: $bin is missing: run cargo build" >&2; exit 2; }
cl() { bash containers/cluster.sh "$@" --dir "$dir"; }
cl down >/dev/null 2>&1 || true
trap 'cl down >/dev/null 2>&1 || true' EXIT
cl up --name cbflush --osds 3 --netns --subnet 198.51.108 \
    --slow-flush osd.0=0 --slow-flush osd.1=0 --slow-flush osd.2=0 >/dev/null
cl pool create flush --size 3 --pg-num 16 >/dev/null
out=$(mktemp -d)
flush() { for o in 0 1 2; do cl slow-flush --osd "$o" --us "$1" >/dev/null; done; }
run() {
    bash containers/cluster.sh exec --dir "$dir" -- "$bin" rados write -p flush -b "$bs" -t 1 -d "$secs" --ramp 1s \
        --format json --progress never "${extra[@]}" >"$out/$1.json"
}
run warm
for ((i = 1; i <= pairs; i++)); do
    flush 0
    run "off-$i"
    flush "$us"
    run "on-$i"
done
flush 0
python3 - "$out" "$pairs" "$bs" "$us" <<'EOF'
import json, statistics as st, sys
out, pairs, bs, us = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(name):
    job = json.load(open(f"{out}/{name}.json"))["jobs"][0]
    shares = {s["part"]: s["ns"] / 1e6 for s in job["attribution"]["shares"]}
    return job["latency_ns"]["mean"] / 1e6, shares
rows = [(load(f"off-{i}"), load(f"on-{i}")) for i in range(1, pairs + 1)]
local_off = [off[1]["osd_local"] for off, _ in rows]
noise = max(local_off) - min(local_off)
print(f"{bs} QD1 writes, size 3, {us} us added to every flush of every OSD, {pairs} pairs:")
rise, flush, local = [], [], []
for (m0, s0), (m1, s1) in rows:
    d = m1 - m0
    f = s1["device_flush"] - s0["device_flush"]
    l = s1["osd_local"] - s0["osd_local"]
    rise.append(d); flush.append(f); local.append(l)
    print(f"  mean {m0:.2f} -> {m1:.2f} ms ({d:+.2f}): device flush {f:+.2f} ({f / d * 100:.0f} %), "
          f"OSD local {l:+.2f}, queue {s1['osd_queue']:.2f}, unattributed "
          f"{s1['unattributed'] / m1 * 100:+.0f} %")
r, f, l = st.median(rise), st.median(flush), st.median(local)
print(f"median: mean {r:+.2f} ms, device flush {f:+.2f} ms = {f / r * 100:.0f} % of it, "
      f"OSD local {l:+.2f} ms (its range over the undelayed runs: {noise:.2f} ms)")
EOF
rm -rf "$out"
