#!/usr/bin/env bash
# perf/run.sh - cephbench against rados bench, rbd bench, fio (rbd and rados engines) and a bare
# librados/librbd aio loop (ceph-sys/examples/bare_aio.rs, the limit), alternated A B A B, then B A B A, on one
# cluster; prints a Markdown table of median per-pair ratios and writes it as JSON.
#
#   perf/run.sh [--quick] [--debug-build] [--conf PATH] [--objectstore memstore|bluestore] [--out PATH]
#                [--memory] [--long SECS] [--baseline BIN] [--only REGEX] [--peers REGEX]
#
# Cluster: --conf PATH (or CEPH_CONF, or CEPHBENCH_TEST_CONF) uses that cluster; otherwise a
# throwaway one is started with containers/cluster.sh in its own network namespace (name cbperf,
# subnet 198.51.102, dir /tmp/cbperf-cluster, 3 OSDs, memstore by default) and stopped at exit.
# Settings (environment): PAIRS (default 4), SECS per run (default 10), IMAGE_SIZE MiB (default 256),
# SHORT (default SECS/5): every pair also runs each tool for SHORT s, and the steady-state CPU per op
# is (CPU of the SECS run - CPU of the SHORT run) / (ops of the one - ops of the other), beside the
# whole process's CPU / ops.
# The RADOS 4K write workloads (QD1, QD16) also pair cephbench with `cephbench --no-telemetry` (the cost of
# telemetry). Memory: peak RSS of a 10 s run against a long run, --long SECS (default 600; 0 skips);
# --memory runs only that check. --baseline BIN adds another cephbench binary (e.g. a build of main)
# as a peer of every workload: before/after from one run. --only REGEX runs the matching workloads,
# --peers REGEX only the matching peers.
# --debug-build uses the debug binaries (as `cargo build` leaves them) instead of a release build.
# --quick (CI, ~35 s): 1 pair, 2 s (and 1 s), two workloads, two peers, no memory check; asserts
# nothing about speed, fails on any script or tool error. The table ends with the targets: met, NOT met
# or not resolved (judged on an interval of the median of the pairs).
# Needs python3 and fio (containers/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0 conf=${CEPH_CONF:-${CEPHBENCH_TEST_CONF:-}} store=memstore out=perf/results.json
profile=release long=${LONG:-600} memory=0 baseline= only= peers=
while [[ $# -gt 0 ]]; do
    case $1 in
    --quick) quick=1 ;;
    --conf) conf=$2; shift ;;
    --objectstore | --store) store=$2; shift ;;
    --out) out=$2; shift ;;
    --debug-build) profile=debug ;;
    --memory) memory=1 ;;
    --long) long=$2; shift ;;
    --baseline) baseline=$(realpath "$2"); shift ;;
    --only) only=$2; shift ;;
    --peers) peers=$2; shift ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "perf/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for t in python3 fio timeout rados rbd ceph; do
    command -v "$t" >/dev/null || { echo "perf/run.sh: $t missing; run containers/install-deps.sh" >&2; exit 2; }
done

[[ $long =~ ^[0-9]+$ ]] || { echo "perf/run.sh: --long takes whole seconds, e.g. --long 60" >&2; exit 2; }
[[ -z $baseline || -x $baseline ]] || { echo "perf/run.sh: --baseline $baseline is not an executable" >&2; exit 2; }
if [[ $quick == 1 ]]; then
    export PAIRS=1 SECS=2 SHORT=1 LONG=0 QUICK=1 IMAGE_SIZE=${IMAGE_SIZE:-16}
else
    export PAIRS=${PAIRS:-3} SECS=${SECS:-10} SHORT=${SHORT:-} LONG=$long QUICK=0
fi
export MEMORY_ONLY=$memory BASELINE=$baseline ONLY=$only PEERS=$peers

flag=--release
[[ $profile == debug ]] && flag=
echo "bench: building cephbench and bare_aio ($profile)" >&2
if [[ $profile == debug ]]; then
    # What tests/run.sh built already: building the binary alone unifies the
    # dependencies' features differently and recompiles the crate (~35 s).
    cargo build --quiet --workspace --all-targets
else
    cargo build $flag --quiet --bin cephbench
    cargo build $flag --quiet -p ceph-sys --example bare_aio
fi
tdir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export CB=$tdir/$profile/cephbench BARE=$tdir/$profile/examples/bare_aio

if [[ -z $conf ]]; then
    dir=/tmp/cbperf-cluster
    bash containers/cluster.sh down --dir "$dir" >/dev/null 2>&1 || true
    trap 'bash containers/cluster.sh down --dir "$dir" >&2 || true' EXIT
    bash containers/cluster.sh up --dir "$dir" --name cbperf --netns --subnet 198.51.102 \
        --osds 3 --objectstore "$store" >/dev/null
    conf=$dir/ceph.conf
else
    # Label the table with the given cluster's objectstore.
    store=$(ceph -c "$conf" --connect-timeout 20 osd metadata 0 -f json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("osd_objectstore","?"))' || echo "?")
fi
export CEPH_CONF=$conf STORE=$store OUT=$out IMAGE_SIZE=${IMAGE_SIZE:-256}
python3 perf/run.py
