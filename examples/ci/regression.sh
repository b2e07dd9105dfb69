#!/usr/bin/env bash
# A CI regression gate for your own project, against the same containerized single-node Ceph
# that cephbench's CI uses (containers/Containerfile): starts the cluster, runs the same
# benchmark with a BASELINE build and the CURRENT build of cephbench (or of whatever
# client-side change you test - e.g. a librados/ceph.conf change, via EXTRA_CONF), and fails
# when `cephbench compare --fail-if-slower PCT` finds a figure (IOPS, MiB/s, mean latency)
# worse by more than PCT % and beyond the run-to-run noise.
#
#   BASELINE=/path/to/old/cephbench CURRENT=target/release/cephbench \
#       bash examples/ci/regression.sh [PCT]          # default PCT 15
#
# Without BASELINE, CURRENT runs twice (baseline then current): a smoke test of the gate.
# A saved baseline result instead: BASELINE_JSON=baseline.json (e.g. an artifact of main).
# Run from the repository root, as root (podman; bash containers/install-deps.sh installs it).
# Results land in OUT (default ./regression-out): baseline.json, current.json, compare.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../../containers/image.sh
source containers/image.sh

PCT=${1:-15}
CURRENT=${CURRENT:-$PWD/target/release/cephbench}
BASELINE=${BASELINE:-$CURRENT}
OUT=${OUT:-$PWD/regression-out}
DUR=${DURATION:-10s}
NAME=cephbench-regress
DIR=/tmp/cephbench-regress
mkdir -p "$OUT"

trap 'cb_podman stop -t 60 "$NAME" >/dev/null 2>&1 || true; cb_podman rm -f "$NAME" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
image=$(bash containers/image.sh build)
cb_podman rm -f "$NAME" >/dev/null 2>&1 || true
rm -rf "$DIR" && mkdir -p "$DIR"
cb_podman run -d --name "$NAME" --init --network none "${CB_RUN_FLAGS[@]}" \
    -v "$DIR:$DIR" -e CEPHBENCH_DIR="$DIR" -e CEPH_CONF="$DIR/ceph.conf" "$image" --osds 1 >/dev/null
for _ in $(seq 1 180); do
    cb_podman logs "$NAME" 2>/dev/null | grep -q '^export CEPH_CONF=' && break
    [[ $(cb_podman inspect -f '{{.State.Running}}' "$NAME") == true ]] ||
        { cb_podman logs "$NAME" >&2; exit 1; }
    sleep 1
done
cb_podman exec "$NAME" cluster.sh pool create bench --dir "$DIR" --app rbd >/dev/null
export CEPH_CONF=$DIR/ceph.conf
pid=$(cb_podman inspect -f '{{.State.Pid}}' "$NAME")

bench() { # $1: binary, $2: output file
    timeout 300 nsenter -t "$pid" -n "$1" rados write -p bench -b 4K -t 16 -d "$DUR" --ramp 2s \
        --format json --progress never >"$2"
}
if [[ -n ${BASELINE_JSON:-} ]]; then
    cp "$BASELINE_JSON" "$OUT/baseline.json"
else
    bench "$BASELINE" "$OUT/baseline.json"
fi
bench "$CURRENT" "$OUT/current.json"

set +e
"$CURRENT" compare "$OUT/baseline.json" "$OUT/current.json" --fail-if-slower "$PCT" | tee "$OUT/compare.txt"
rc=${PIPESTATUS[0]}
set -e
if ((rc == 4)); then
    echo "regression: worse than the baseline by more than $PCT % (see above)" >&2
elif ((rc == 0)); then
    echo "no regression beyond $PCT %" >&2
fi
exit "$rc"
