#!/usr/bin/env bash
# perf/watch-soak.sh - `cephbench watch` held for a long time: its resident memory (RSS, from
# /proc) sampled every minute, scraped every 5 s as Prometheus would; prints each sample, then
# the last sample against the first one after warm-up (minute 2) and fails above +10 %.
#
#   perf/watch-soak.sh [--minutes N] [--conf PATH] [--pool POOL] [--rate R] [--debug-build | --bin PATH]
#
# Defaults: 30 minutes, CEPH_CONF or CEPHBENCH_TEST_CONF, a size-1 pool `cbsoak` created (and
# removed) here, 50 ops/s (a canary's rate times ten: what a day of 4 op/s is in ~2 hours).
# Without a cluster: a throwaway one (containers/cluster.sh: 1 memstore OSD in namespace cbsoak,
# subnet 198.51.103), stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=30 conf=${CEPH_CONF:-${CEPHBENCH_TEST_CONF:-}} pool="" rate=50 profile=release bin=""
while (($#)); do
    case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --conf) conf=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --debug-build) profile=debug; shift ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "watch-soak: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
    esac
done
((minutes >= 3)) || { echo "watch-soak: --minutes 3 or more (minute 2 is the baseline)" >&2; exit 2; }

own="" made_pool="" pid=""
cleanup() {
    [[ -z $pid ]] || { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
    if [[ -n $made_pool ]]; then
        ceph -c "$conf" osd pool delete "$made_pool" "$made_pool" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    fi
    [[ -z $own ]] || bash containers/cluster.sh down --dir "$own" >/dev/null 2>&1 || true
}
trap cleanup EXIT

if [[ -z $conf ]]; then
    own=/tmp/cbsoak-cluster
    bash containers/cluster.sh up --dir "$own" --name cbsoak --netns --subnet 198.51.103 \
        --osds 1 --objectstore memstore >/dev/null
    conf=$own/ceph.conf
fi
if [[ -z $pool ]]; then
    pool=cbsoak
    ceph -c "$conf" osd pool create "$pool" 8 8 replicated --size 1 >/dev/null 2>&1
    ceph -c "$conf" osd pool application enable "$pool" rados >/dev/null 2>&1
    made_pool=$pool
fi

if [[ -z $bin ]]; then
    [[ $profile == debug ]] || cargo build --release --bin cephbench >&2
    bin=target/$profile/cephbench
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
"$bin" -c "$conf" --op-timeout 10s watch -p "$pool" --rate "$rate" --listen "127.0.0.1:$port" \
    --log-interval 10s 2>"$log" &
pid=$!

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
echo "watch-soak: pid $pid, pool $pool, $rate op/s, $minutes min, scraped every 5 s" >&2
declare -a rss
for ((m = 1; m <= minutes; m++)); do
    for ((s = 0; s < 12; s++)); do
        sleep 5
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "watch-soak: watch died" >&2; exit 1; }
        curl -sf "127.0.0.1:$port/metrics" >/dev/null || { echo "watch-soak: scrape failed" >&2; exit 1; }
    done
    rss[m]=$(rss_kib)
    echo "minute $m: RSS ${rss[m]} KiB" >&2
done
tail -n 2 "$log" >&2
base=${rss[2]} last=${rss[minutes]}
growth=$(awk -v a="$base" -v b="$last" 'BEGIN { printf "%+.1f", (b / a - 1) * 100 }')
echo "watch-soak: RSS minute 2 ${base} KiB, minute $minutes ${last} KiB: ${growth} % (limit +10 %)"
awk -v a="$base" -v b="$last" 'BEGIN { exit !(b <= a * 1.10) }' || { echo "watch-soak: RSS grew" >&2; exit 1; }
