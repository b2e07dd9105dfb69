#!/usr/bin/env bash
# perf/projections.sh - do the what-if projections forecast a pool they were not made from?
#
#   perf/projections.sh [--bs 4K] [--qd 1] [--pairs 3] [--secs 6] [--us 3000] [--dir DIR]
#
# Starts a throwaway cluster of 3 bluestore OSDs whose block files are in RAM, each under the
# slow-flush shim (tools/slowflush: every fsync/fdatasync of the OSD takes DELAY µs longer),
# in its own network namespace (name cbproj, subnet 198.51.109), with a size-3 and a size-1
# pool on the same OSDs. Each pair of rounds (the order alternates) runs QD writes of --bs:
#   slow: every OSD's flush DELAY µs slower (size 3 and size 1);
#   fast: no delay (size 3 and size 1);
#   one:  only osd.1's flush slower (size 3).
# Each projection is made from one run and held against another run it was not made from:
#   flush (size 3, size 1): the slow run, every drive flushing in at most the fast run's own
#                           device flush  -> the fast run;
#   plp:                    the slow run (size 3) as PLP drives -> the fast run (drives in RAM);
#   like:osd.0:             the one-slow-replica run, no drive slower than osd.0's -> the fast run;
#   no-copy-wait:           the fast size-3 run -> the fast size-1 run.
# Prints every pair's error (measured / projected - 1) and the median per projection. Stops
# its cluster at exit. Runs the debug binary as `cargo build` leaves it. The writes are small
# (4 KiB for a few seconds), so the RAM rig is safe; large blocks fill RAM: keep --bs small.
set -euo pipefail
cd "$(dirname "$0")/.."

bs=4K qd=1 pairs=3 secs=6 us=3000 dir=/dev/shm/cbproj-cluster
while [[ $# -gt 0 ]]; do
    case $1 in
        --bs) bs=$2; shift 2 ;;
        --qd) qd=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        --secs) secs=$2; shift 2 ;;
        --us) us=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        *) echo "projections.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
    esac
done
bin=$PWD/target/debug/cephbench
[[ -x $bin ]] || { echo "projections.sh: $bin is missing: run cargo build" >&2; exit 2; }
cl() { bash containers/cluster.sh "$@" --dir "$dir"; }
cl down >/dev/null 2>&1 || true
trap 'cl down >/dev/null 2>&1 || true' EXIT
cl up --name cbproj --osds 3 --netns --subnet 198.51.109 \
    --slow-flush osd.0=0 --slow-flush osd.1=0 --slow-flush osd.2=0 >/dev/null
cl pool create p3 --size 3 --pg-num 16 >/dev/null
cl pool create p1 --size 1 --pg-num 16 >/dev/null
out=${KEEP_DIR:-$(mktemp -d)}
mkdir -p "$out"
delay() { for o in 0 1 2; do cl slow-flush --osd "$o" --us "${1:-0}" >/dev/null; done; }
run() { # NAME POOL
    bash containers/cluster.sh exec --dir "$dir" -- "$bin" rados write -p "$2" -b "$bs" -t "$qd" -d "$secs" --ramp 1s \
        --format json --progress never >"$out/$1.json"
}
round() { # KIND I
    case $1 in
        slow) delay "$us"; run "slow3-$2" p3; run "slow1-$2" p1 ;;
        fast) delay 0; run "fast3-$2" p3; run "fast1-$2" p1 ;;
        one) delay 0; cl slow-flush --osd 1 --us "$us" >/dev/null; run "one3-$2" p3 ;;
    esac
}
run warm3 p3
run warm1 p1
for ((i = 1; i <= pairs; i++)); do
    if ((i % 2)); then order=(slow fast one); else order=(one fast slow); fi
    for k in "${order[@]}"; do round "$k" "$i"; done
done
delay 0
# The projections, made offline from the saved runs.
flush_of() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
s = {x["part"]: x["ns"] for x in j["attribution"]["shares"]}
print("%.3fms" % (s["device_flush"] / 1e6))' "$1"; }
project() { # NAME FROM ASK
    "$bin" report "$out/$2.json" --what-if "$3" --format json >"$out/$1.json"
}
for ((i = 1; i <= pairs; i++)); do
    project "flush3-$i" "slow3-$i" "flush:$(flush_of "$out/fast3-$i.json")"
    project "flush1-$i" "slow1-$i" "flush:$(flush_of "$out/fast1-$i.json")"
    project "plp3-$i" "slow3-$i" plp
    project "like3-$i" "one3-$i" like:osd.0
    project "nocopy-$i" "fast3-$i" no-copy-wait
done
python3 - "$out" "$pairs" "$bs" "$qd" "$us" <<'EOF'
import json, statistics as st, sys
out, pairs, bs, qd, us = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def mean(name):
    return json.load(open(f"{out}/{name}.json"))["jobs"][0]["latency_ns"]["mean"] / 1e6
def projected(name, what):
    for p in json.load(open(f"{out}/{name}.json"))["jobs"][0].get("projections") or []:
        if p["what"].startswith(what):
            return p["projected_mean_ns"] / 1e6, p["mean_ns"] / 1e6
    raise SystemExit(f"{name}: no projection '{what}'")
checks = [
    ("flush cap, size 3", "flush3", "drives flushing", "fast3"),
    ("flush cap, size 1", "flush1", "drives flushing", "fast1"),
    ("PLP, size 3", "plp3", "PLP drives", "fast3"),
    ("like:osd.0 (osd.1 slow)", "like3", "every drive flushing no slower", "fast3"),
    ("no-copy-wait vs size 1", "nocopy", "no wait for copies", "fast1"),
]
print(f"{bs} QD{qd} writes, 3 OSDs in RAM, {us} us added per flush, {pairs} alternated pairs;")
print("error = measured / projected - 1 (each projection against a run it was not made from)")
for label, proj, what, against in checks:
    errs, cells = [], []
    for i in range(1, pairs + 1):
        p, base = projected(f"{proj}-{i}", what)
        m = mean(f"{against}-{i}")
        errs.append(m / p - 1)
        cells.append(f"{base:.2f}->{p:.2f} vs {m:.2f} ({(m / p - 1) * 100:+.0f} %)")
    print(f"  {label:26} median {st.median(errs) * 100:+4.0f} %   " + "; ".join(cells))
EOF
[[ -n ${KEEP_DIR:-} ]] || rm -rf "$out"
