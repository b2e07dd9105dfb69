#!/usr/bin/env bash
# Captures, from a real cluster's daemons, the JSON answers cephbench parses
# (osd dump, pg dump pgs_brief, perf dump, dump_osd_network,
# dump_historic_ops_by_duration, osd pool get all, osd crush rule dump,
# osd crush tree --show-shadow, config get, version) into OUT/, plus
# OUT/expected.json: the same facts read independently from Ceph's plain-text
# answers (`ceph osd dump`, `ceph osd pool ls detail`, `ceph pg map`, ...),
# which tests/release_fixtures.rs checks the parsers against.
#
#   tests/capture-fixtures.sh --conf CEPH_CONF --out DIR [--ceph "CMD"] [--keep FILE]...
#
# --ceph: the ceph CLI to use (default `ceph`; e.g. "chroot /var/cache/cephbench/root-trixie
# ceph" for the release's own CLI). --keep FILE: leave OUT/FILE alone if it exists (a
# fixture other tests pin). Creates the pool cbfix-<pid> (size min(3, OSDs), 8 PGs), writes
# and reads 24 objects, waits (<= 90 s) until the OSDs report heartbeat times, captures,
# and deletes the pool. Needs the admin keyring.
set -euo pipefail
die() { echo "capture-fixtures: $*" >&2; exit 1; }

conf="" out="" cli="ceph" keep=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --conf) conf=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --ceph) cli=${2:?}; shift 2 ;;
        --keep) keep+=("${2:?}"); shift 2 ;;
        *) die "unknown argument '$1' (see the header of $0)" ;;
    esac
done
[[ -n $conf && -n $out ]] || die "usage: $0 --conf CEPH_CONF --out DIR [--ceph CMD]"
read -r -a CLI <<<"$cli"
c() { timeout 60 "${CLI[@]}" --connect-timeout 10 -c "$conf" "$@"; }
# Objects are written by this machine's client (files stay on the host).
RADOS=(rados)
PY=/usr/bin/python3

mkdir -p "$out"
pool=cbfix-$$
tmp=$(mktemp -d)
cleanup() {
    c osd pool rm "$pool" "$pool" --yes-i-really-really-mean-it >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

nosd=$(c osd ls | wc -l)
size=$((nosd < 3 ? nosd : 3))
c osd pool create "$pool" 8 8 replicated "--size=$size" >/dev/null 2>&1
c osd pool application enable "$pool" rados >/dev/null 2>&1
for ((i = 0; i < 120; i++)); do
    st=$(c pg ls-by-pool "$pool" -f json 2>/dev/null | $PY -c 'import json,sys
d = json.load(sys.stdin); s = d["pg_stats"] if isinstance(d, dict) else d
print(len(s), sum(1 for p in s if p.get("state") == "active+clean"))' 2>/dev/null || echo "0 -1")
    [[ $st == "8 8" ]] && break
    sleep 0.5
done
[[ $st == "8 8" ]] || die "pool $pool not active+clean: $st"

head -c 4096 /dev/urandom >"$tmp/obj"
objects=()
for ((i = 0; i < 24; i++)); do
    objects+=("cbfix_obj_$i")
    timeout 30 "${RADOS[@]}" -c "$conf" -p "$pool" put "cbfix_obj_$i" "$tmp/obj"
    timeout 30 "${RADOS[@]}" -c "$conf" -p "$pool" get "cbfix_obj_$i" "$tmp/back"
done

kept() { local k; for k in "${keep[@]}"; do [[ $k == "$1" && -s $out/$1 ]] && return 0; done; return 1; }

# Heartbeat times appear after the first 60 s window.
if ! kept dump_osd_network.json; then
    for ((i = 0; i < 90; i++)); do
        c tell osd.0 dump_osd_network 0 >"$out/dump_osd_network.json" 2>/dev/null || true
        $PY -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("entries") else 1)' \
            "$out/dump_osd_network.json" 2>/dev/null && break
        sleep 1
    done
fi
cap() {
    local f=$1
    shift
    kept "$f" && return 0
    c "$@" >"$out/$f" 2>/dev/null || die "ceph $* failed"
    $PY -m json.tool "$out/$f" >/dev/null || die "ceph $* did not answer JSON"
}

# The osdmap must not move while the JSON and the plain text are read.
for ((try = 0; try < 5; try++)); do
    c osd dump >"$tmp/osd_dump.txt"
    cap osd_dump.json osd dump -f json
    cap pg_dump_pgs_brief.json pg dump pgs_brief -f json
    c osd pool ls detail >"$tmp/pools.txt"
    pool_id=$(awk -v p="'$pool'" '$1 == "pool" && $3 == p { print $2 }' "$tmp/pools.txt")
    [[ -n $pool_id ]] || die "pool $pool not in 'osd pool ls detail'"
    : >"$tmp/pgmap.txt"
    for ((s = 0; s < 8; s++)); do c pg map "$pool_id.$(printf %x $s)" >>"$tmp/pgmap.txt"; done
    c osd dump >"$tmp/osd_dump2.txt"
    [[ $(head -1 "$tmp/osd_dump.txt") == $(head -1 "$tmp/osd_dump2.txt") ]] && break
done
cap perf_dump.json tell osd.0 perf dump
cap dump_historic_ops_by_duration.json tell osd.0 dump_historic_ops_by_duration
cap osd_pool_get_all.json osd pool get "$pool" all -f json
cap osd_crush_rule_dump.json osd crush rule dump -f json
cap osd_crush_tree.json osd crush tree --show-shadow -f json
cap config_get_osd_memory_target.json config get osd.0 osd_memory_target -f json
cap osd_metadata.json osd metadata -f json
cap version.json version -f json
c version >"$tmp/version.txt"
c config get osd.0 osd_memory_target >"$tmp/memtarget.txt"
c osd crush rule ls >"$tmp/rules.txt"

# expected.json, from the plain-text answers only.
# (Kept with --keep expected.json: it describes the kept documents, not this cluster.)
exp=$out/expected.json
kept expected.json && exp=$tmp/expected.json
$PY - "$tmp" "$pool" "${objects[@]}" >"$exp" <<'EOF'
import json, re, sys
tmp, pool, objects = sys.argv[1], sys.argv[2], sys.argv[3:]
rd = lambda f: open(f"{tmp}/{f}").read()
dump = rd("osd_dump.txt")
epoch = int(re.search(r"^epoch (\d+)$", dump, re.M).group(1))
osds = []
for m in re.finditer(r"^osd\.(\d+) (up|down)\s+(in|out) .*?\[v2:([0-9.]+):(\d+)/", dump, re.M):
    osds.append({"id": int(m.group(1)), "up": m.group(2) == "up", "in": m.group(3) == "in",
                 "public_addr": f"{m.group(4)}:{m.group(5)}"})
line = next(l for l in rd("pools.txt").splitlines() if f" '{pool}' " in l)
num = lambda k: int(re.search(rf"\b{k} (\d+)", line).group(1))
rule_id = num("crush_rule")
rules = rd("rules.txt").split()
acting = {}
for m in re.finditer(r"pg \d+\.([0-9a-f]+) \(.*?\) -> up \[[0-9,]*\] acting \[([0-9,]*)\]", rd("pgmap.txt")):
    acting[int(m.group(1), 16)] = [int(x) for x in m.group(2).split(",") if x]
ver = re.search(r"ceph version (\S+)", rd("version.txt")).group(1)
json.dump({
    "ceph_version": ver,
    "epoch": epoch,
    "osds": osds,
    "pool": {"name": pool, "id": int(line.split()[1]), "size": num("size"),
             "min_size": num("min_size"), "pg_num": num("pg_num"),
             "crush_rule": rules[rule_id] if rule_id < len(rules) else None},
    "acting": [acting[s] for s in sorted(acting)],
    "objects": objects,
    "osd_memory_target": int(rd("memtarget.txt").strip()),
}, sys.stdout, indent=1)
print()
EOF
echo "capture-fixtures: $(ls "$out" | wc -l) files in $out (ceph $(grep -o '"ceph_version": "[^"]*"' "$out/expected.json" | cut -d'"' -f4))" >&2
