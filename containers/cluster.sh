#!/usr/bin/env bash
# cluster.sh - start/stop a small throwaway Ceph (pacific) cluster for benchmarking.
#
# Design
# ------
# * Everything lives in one directory DIR (default /tmp/cephbench-cluster): ceph.conf, the
#   client.admin keyring (mode 0600), mon/mgr/osd data dirs (DIR/mon.a, DIR/mgr.x, DIR/osd.N),
#   logs (DIR/log/), admin sockets and pid files (DIR/run/), and a marker file DIR/.cephbench
#   recording how the cluster was made (name, netns, subnet, OSD count, objectstore).
#   `down` stops only processes it can prove are this DIR's: pids from DIR/run/*.pid, plus any
#   pid-file-less straggler (an interrupted `ceph-osd --mkfs`), and in both cases only when
#   /proc/PID/cmdline is a ceph-* binary run with `-c DIR/ceph.conf`.
#   Clients need nothing but `-c DIR/ceph.conf` (or CEPH_CONF=DIR/ceph.conf): the conf names
#   `mon host` and `keyring = DIR/ceph.client.admin.keyring`.
# * One mon (mon.a), one mgr (mgr.x), N OSDs, cephx required everywhere. Daemons run as root
#   (no --setuser), daemonised by Ceph itself (the parent returns once the daemon initialised),
#   writing pid files DIR/run/$name.pid.
# * Networking (default): loopback, see --no-netns below: all traffic stays on 127.0.0.0/8.
# * Networking with --netns: a network namespace NAME holds all daemons, so default ports (3300,
#   6789, 6800-7300) never clash with another cluster on this machine. A veth pair connects it
#   to the host: host side `cb-NAME` (15 chars max) = SUBNET.1/24; namespace side `ceph0` carries
#   the daemons' PUBLIC addresses: mon and mgr SUBNET.10, osd.i SUBNET.(20+i). The OSDs' CLUSTER
#   (replication/heartbeat back) network is the namespace's private loopback, 127.0.1.(20+i)
#   (cluster network = 127.0.1.0/24). Host clients reach SUBNET.x through the veth directly; no
#   `ip netns exec` needed. IPv6 is disabled on both veth ends.
#   SUBNET defaults to 198.51.100 (TEST-NET-2). It is NOT 192.0.2: on the project's machines
#   eth0 already sits in 192.0.2.0/24 with its default gateway at 192.0.2.1, and a second route
#   to that subnet would break the host's networking. `up` refuses any subnet the host already
#   routes or has an address in. Run one netns cluster per subnet (`--subnet` to pick another).
# * Networking with --switch (the network-delay test rig): every daemon and each client get a
#   network namespace of their own, NAME-mon, NAME-mgr, NAME-osdI, NAME-cli (and, with
#   --clients N, NAME-cli1 .. NAME-cli<N-1>: separate client "hosts"), joined by the
#   user-space delay switch cephbench-netdelay (tools/netdelay; no sch_netem on this kernel),
#   which holds one TAP per namespace interface and delays each frame per (source, destination)
#   port. Public network 192.0.2.0/25 (segment "public": mon .10, mgr .11, osd.i .(20+i),
#   client i .(100+i)), cluster network 192.0.2.128/25 (segment "cluster", a second TAP per OSD:
#   osd.i .(148+i); client 0 has one too, port clic, .140, as a tool run on an OSD node would, so
#   that it can time the back network's own round trip); frames never cross segments, so client<->OSD and OSD<->OSD replication
#   traffic cross different switch ports and get delays of their own. The addresses exist only
#   inside the namespaces (the host's own eth0 may sit in 192.0.2.0/24: nothing routes between
#   them), so clients run in NAME-cli: `cluster.sh exec --dir DIR [--client I] -- CMD`; the script's own
#   `ceph` calls do the same. `cluster.sh delay` / `switchctl` change delays at run time
#   through the switch's control socket DIR/run/netdelay.sock. TAPs have MTU 9000.
# * Loopback (the default; --no-netns says so explicitly, e.g. inside a container): daemons bind
#   loopback addresses: mon/mgr 127.0.0.10, osd.i public 127.0.0.(20+i), cluster 127.0.1.(20+i),
#   default ports. One such cluster per network namespace (`up` refuses if 127.0.0.10 is taken);
#   it coexists with a cluster on 127.0.0.1 or in a netns.
# * Each OSD is its own CRUSH host (crush location = root=default host=NAME-hI), so size-3 pools
#   go active+clean with 3 OSDs. Pool defaults: size min(N,3), min size 1 (N<3) or 2 (N>=3).
# * bluestore (default) uses sparse 10 GiB `block` files created by ceph-osd --mkfs;
#   memstore keeps data in RAM (memstore device bytes = 4 GiB).
# * Every `ceph` CLI call is bounded (timeout + --connect-timeout); readiness is polled with
#   `ceph osd stat`/`ceph mgr stat`/`ceph pg stat` (JSON), never by parsing `ceph -s`.
# * `up` is idempotent: if DIR's cluster is running and healthy it says so and exits 0; if it was
#   stopped with `down --keep` (or a daemon died), `up` restarts the missing daemons.
#   stdout of `up` and `env` is eval-safe (`export ...` lines and `#` comments); progress goes
#   to stderr.
# * --release R (reef, tentacle): the daemons and the bootstrap tools (ceph-mon/osd/mgr, ceph,
#   ceph-authtool, monmaptool, rbd) run from a debootstrapped root of the Debian suite that
#   carries release R (containers/release-root.sh builds it under /var/cache/cephbench), via
#   `chroot ROOT`. /proc, /sys, /dev and DIR are bind-mounted into ROOT at the same paths, so
#   every path in ceph.conf is valid inside and outside; clients on the host (cephbench, this
#   machine's librados) use the same ceph.conf. `down` (also after a failed `up`) stops the
#   daemons and unmounts DIR's bind mount, and /proc, /sys, /dev once no other cluster uses ROOT.
set -euo pipefail

PROG=$(basename "$0")
DEFAULT_DIR=/tmp/cephbench-cluster
DEFAULT_NAME=cephbench
DEFAULT_SUBNET=198.51.100
MARKER=.cephbench
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SW_PUB=192.0.2
SW_MTU=9000

usage() {
    cat <<EOF
Usage:
  $PROG up     [--osds N] [--objectstore bluestore|memstore] [--dir DIR] [--name NAME]
               [--netns [--subnet A.B.C] | --switch [--clients N] [--switch-bin PATH]] [--no-netns]
               [--timeout SECS] [--release reef|tentacle]
               [--slow-flush osd.I=DUR]... [--class osd.I=CLASS]...
  $PROG down   [--dir DIR] [--keep] [--name NAME]
  $PROG status [--dir DIR]
  $PROG env    [--dir DIR]
  $PROG pool create NAME [--size S] [--pg-num P] [--app rbd|rados|APP] [--class CLASS] [--dir DIR] [--timeout SECS]
  $PROG pool delete NAME [--dir DIR]
  $PROG exec   [--dir DIR] [--client I] -- CMD [ARGS...]
  $PROG delay  [--dir DIR] --link public|cluster|client|all --us N [--osd I] [--client I]
  $PROG switchctl [--dir DIR] LINE...
  $PROG slow-flush [--dir DIR] --osd I --us N

Starts a throwaway Ceph cluster (1 mon, 1 mgr, N OSDs, cephx on) whose files all live in DIR.

Commands:
  up       Bootstrap (or restart) the cluster and wait until all OSDs are up+in and the mgr
           is available. Prints how long it took and 'export CEPH_CONF=DIR/ceph.conf'
           (stdout is eval-safe). Exits 0 at once if the cluster in DIR is already healthy.
  down     Stop the daemons of DIR: the pids in DIR/run/*.pid, then any process left without a
           pid file (e.g. an interrupted mkfs); in both cases only if /proc/PID/cmdline is a
           ceph-* binary run with '-c DIR/ceph.conf'. OSDs first, then mgr, then mon; SIGKILL
           after 15 s. Removes the netns and veth made by 'up' and deletes DIR unless --keep.
           Works after a half-failed 'up'; a no-op if nothing is there.
  status   Show the configuration, daemon pids and 'ceph -s'. Exit 1 if not running.
  env      Print 'export CEPH_CONF=DIR/ceph.conf' for clients.
  pool create NAME
           Create a replicated pool (idempotent), set size/min_size, enable an application,
           and wait until all its PGs (and all PGs of the cluster) are active+clean.
  pool delete NAME
           Delete a pool.
  exec     Run CMD as a client of the cluster, with CEPH_CONF set: in the client namespace
           (--switch; --client I picks client I's, default 0), in the cluster's namespace
           (--netns), or as is (loopback).
  delay    (--switch) Set the one-way delay, in microseconds, of every frame on a link:
             public   all pairs on the public network (client, mon, mgr, OSD fronts)
             cluster  every pair on the cluster network (OSD<->OSD replication, back heartbeats;
                      client 0 to the OSDs' cluster addresses)
             client   client<->OSDs, mon and mgr on the public network only (every client;
                      --client I: client I's link only)
             all      everything
           --osd I narrows it to the pairs that touch osd.I. Takes effect at once (frames
           already queued keep their delay and their order). A round trip gains 2 x N us.
  slow-flush
           Set the extra time every fsync/fdatasync of osd.I takes, in microseconds, at once
           (the OSD must have been started with --slow-flush; 0 turns the delay off).
  switchctl
           (--switch) Send raw control lines to the switch: 'delay SRC DST US' (SRC/DST: a
           port mon mgr cli clic cliI osdI osdIc, '*', or '@public'/'@cluster'), 'show', 'stats'.

Options:
  --osds N           number of OSDs (default 1; 1..32)
  --objectstore S    bluestore (default; sparse 10 GiB files) or memstore (4 GiB in RAM each)
  --dir DIR          cluster directory (default $DEFAULT_DIR)
  --name NAME        cluster/netns name (default $DEFAULT_NAME); host veth is cb-NAME (15 chars)
  --subnet A.B.C     public /24 used in the netns (default $DEFAULT_SUBNET): host side A.B.C.1,
                     mon/mgr A.B.C.10, osd.i A.B.C.(20+i)
  --no-netns         (the default) no namespace: bind 127.0.0.10 (mon, mgr),
                     127.0.0.(20+i) / 127.0.1.(20+i) (OSDs); one such cluster per host
  --netns            daemons in network namespace NAME, reached from the host through a veth
                     (public network SUBNET.0/24, see --subnet)
  --switch           the delay-switch rig: each daemon and the client in its own network
                     namespace (NAME-mon, NAME-mgr, NAME-osdI, NAME-cli), public 192.0.2.0/25,
                     cluster 192.0.2.128/25, joined by cephbench-netdelay; see 'delay', 'exec'
  --clients N        (--switch) N client namespaces (1..16, default 1), each a "host" with its
                     own switch port: client 0 is NAME-cli (port cli, 192.0.2.100; and port
                     clic, 192.0.2.140, on the cluster network, as an OSD node), client i
                     NAME-cli<i> (port cli<i>, 192.0.2.(100+i)); fixed when the cluster is made
  --client I         (exec, delay --link client) client I of --clients N (default: exec 0,
                     delay every client)
  --switch-bin PATH  the cephbench-netdelay binary (default: \$CEPHBENCH_NETDELAY, PATH, then
                     the repository's target/{release,debug}; build: cargo build --workspace)
  --release R        run the daemons of Ceph release R (reef = Debian trixie's 18.2, tentacle =
                     sid's 20.2) from a chroot made by containers/release-root.sh (built on
                     first use: a few minutes, ~1 GB under /var/cache/cephbench); default: this
                     machine's own Ceph
  --slow-flush osd.I=DUR
                     (up) start osd.I with tools/slowflush preloaded (built here with cc): each of
                     its fsync/fdatasync calls - BlueStore's device flush and its RocksDB WAL sync -
                     takes DUR longer (e.g. 2ms, 500us; 0 = preloaded, no delay yet), like a drive
                     without power-loss protection; change it later with 'slow-flush'. Repeatable.
  --class osd.I=CLASS
                     (up) give osd.I the CRUSH device class CLASS (e.g. consumer, plp). Repeatable.
  --class CLASS      (pool create) place the pool on the OSDs of that class only (a CRUSH rule
                     cb-CLASS: replicas on distinct hosts of the class)
  --timeout SECS     readiness timeout for 'up' and 'pool create' (default 120)
  --keep             'down' keeps DIR (data, logs); a later 'up' restarts that cluster
  --size S           pool size (default: the cluster's osd pool default size = min(N,3))
  --pg-num P         pool pg_num = pgp_num (default 32)
  --app APP          application to enable on the pool (default rados; rbd also runs rbd pool init)
  -h, --help         this text

Examples:
  bash containers/cluster.sh up --osds 3
  ceph -c $DEFAULT_DIR/ceph.conf -s
  bash containers/cluster.sh pool create bench --size 3 --pg-num 32
  rados -c $DEFAULT_DIR/ceph.conf -p bench bench 10 write -b 4096 -t 16
  bash containers/cluster.sh down

  # delay-switch rig next to another cluster (own --dir and --name); 1 ms on the cluster network
  bash containers/cluster.sh up --switch --osds 3 --objectstore memstore --dir /tmp/cb-sw --name cbsw
  bash containers/cluster.sh pool create lat --size 3 --dir /tmp/cb-sw
  bash containers/cluster.sh exec --dir /tmp/cb-sw -- ceph -s
  bash containers/cluster.sh delay --dir /tmp/cb-sw --link cluster --us 1000
  bash containers/cluster.sh exec --dir /tmp/cb-sw -- target/release/cephbench rados write -p lat -b 4K -t 1 -d 10
  bash containers/cluster.sh down --dir /tmp/cb-sw

  # three client hosts on the switch; 1 ms on client 1's link only
  bash containers/cluster.sh up --switch --clients 3 --osds 3 --objectstore memstore --dir /tmp/cb-sw --name cbsw
  bash containers/cluster.sh delay --dir /tmp/cb-sw --link client --client 1 --us 1000
  bash containers/cluster.sh exec --dir /tmp/cb-sw --client 2 -- ip -br addr
EOF
}

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

# JSON helper: reads JSON on stdin, prints the Python expression $1 evaluated with d = the JSON.
# Uses the system python3 (a dependency of ceph-common), not whatever python3 is first in PATH.
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
pyjson() {
    "$PY" -c 'import json,sys
d = json.load(sys.stdin)
r = eval(sys.argv[1], {"d": d})
print(str(r).lower() if isinstance(r, bool) else r)' "$1"
}

now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------------------------
# Options and derived paths
# ---------------------------------------------------------------------------------------------
CMD=""
POOL_CMD=""
POOL_NAME=""
OSDS=""
OBJECTSTORE=""
DIR=$DEFAULT_DIR
NAME=""
SUBNET=""
NETNS_MODE=""
SWITCH_MODE=""
SWITCH_BIN=""
EXEC_ARGS=()
CTL_LINES=()
LINK=""
DELAY_US=""
DELAY_OSD=""
CLIENTS_OPT=""
CLIENT_OPT=""
TIMEOUT=120
RELEASE=""
ROOT=""
# Command prefix for every Ceph binary: empty, or (chroot ROOT) with --release.
CX=()
KEY_TYPE=()
MONMAP_CIPHERS=()
KEEP=0
POOL_SIZE=""
POOL_PGS=32
POOL_APP=rados
POOL_CLASS=""
SLOW_FLUSH_OPT=()
declare -A SLOW_FLUSH_US=()
CLASS_OPT=()
# OSDs started with the slow-flush shim (space-separated ids; recorded in the marker).
SLOW_OSDS=""

parse_args() {
    [[ $# -gt 0 ]] || { usage >&2; exit 2; }
    case $1 in
        -h|--help|help) usage; exit 0 ;;
        up|down|status|env|delay) CMD=$1; shift ;;
        exec)
            CMD="exec"; shift
            local pre=()
            while [[ $# -gt 0 && $1 != -- ]]; do pre+=("$1"); shift; done
            [[ $# -gt 0 ]] || die "usage: $PROG exec [--dir DIR] -- CMD [ARGS...]"
            shift
            [[ $# -gt 0 ]] || die "exec: no command after --"
            EXEC_ARGS=("$@")
            set -- "${pre[@]}"
            ;;
        switchctl) CMD=switchctl; shift ;;
        slow-flush) CMD=slow-flush; shift ;;
        pool)
            CMD=pool; shift
            [[ $# -ge 2 ]] || die "usage: $PROG pool create|delete NAME [options]"
            POOL_CMD=$1; POOL_NAME=$2; shift 2
            [[ $POOL_CMD == create || $POOL_CMD == delete ]] || die "unknown pool command '$POOL_CMD'"
            [[ $POOL_NAME =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad pool name '$POOL_NAME'"
            ;;
        *) usage >&2; die "unknown command '$1'" ;;
    esac
    while [[ $# -gt 0 ]]; do
        case $1 in
            --osds) OSDS=${2:?--osds needs a value}; shift 2 ;;
            --objectstore) OBJECTSTORE=${2:?--objectstore needs a value}; shift 2 ;;
            --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
            --name) NAME=${2:?--name needs a value}; shift 2 ;;
            --subnet) SUBNET=${2:?--subnet needs a value}; shift 2 ;;
            --no-netns) NETNS_MODE=0; shift ;;
            --netns) NETNS_MODE=1; shift ;;
            --switch) SWITCH_MODE=1; shift ;;
            --switch-bin) SWITCH_BIN=${2:?--switch-bin needs a value}; shift 2 ;;
            --link) LINK=${2:?--link needs a value}; shift 2 ;;
            --us) DELAY_US=${2:?--us needs a value}; shift 2 ;;
            --osd) DELAY_OSD=${2:?--osd needs a value}; shift 2 ;;
            --clients) CLIENTS_OPT=${2:?--clients needs a value}; shift 2 ;;
            --client) CLIENT_OPT=${2:?--client needs a value}; shift 2 ;;
            --timeout) TIMEOUT=${2:?--timeout needs a value}; shift 2 ;;
            --release) RELEASE=${2:?--release needs a value}; shift 2 ;;
            --keep) KEEP=1; shift ;;
            --size) POOL_SIZE=${2:?--size needs a value}; shift 2 ;;
            --pg-num) POOL_PGS=${2:?--pg-num needs a value}; shift 2 ;;
            --app) POOL_APP=${2:?--app needs a value}; shift 2 ;;
            --slow-flush) SLOW_FLUSH_OPT+=("${2:?--slow-flush needs osd.I=DUR}"); shift 2 ;;
            --class)
                if [[ $CMD == pool ]]; then POOL_CLASS=${2:?--class needs a class}
                else CLASS_OPT+=("${2:?--class needs osd.I=CLASS}"); fi
                shift 2 ;;
            -h|--help) usage; exit 0 ;;
            -*) die "unknown option '$1' (see --help)" ;;
            *)
                [[ $CMD == switchctl ]] || die "unexpected argument '$1' (see --help)"
                CTL_LINES+=("$1"); shift ;;
        esac
    done
    [[ -z $OSDS || ( $OSDS =~ ^[1-9][0-9]?$ && $OSDS -le 32 ) ]] || die "--osds must be 1..32"
    [[ -z $OBJECTSTORE || $OBJECTSTORE == bluestore || $OBJECTSTORE == memstore ]] ||
        die "--objectstore must be bluestore or memstore"
    [[ -z $NAME || $NAME =~ ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$ ]] || die "bad --name '$NAME'"
    if [[ -n $SUBNET ]]; then
        [[ $SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || die "--subnet must look like 198.51.100"
        local o; for o in "${BASH_REMATCH[@]:1}"; do ((10#$o <= 255)) || die "bad --subnet"; done
        SUBNET=$((10#${BASH_REMATCH[1]})).$((10#${BASH_REMATCH[2]})).$((10#${BASH_REMATCH[3]}))
        [[ ${BASH_REMATCH[1]} != 127 ]] || die "--subnet must not be in 127/8"
    fi
    [[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
    [[ -z $RELEASE || $RELEASE == reef || $RELEASE == tentacle ]] ||
        die "--release must be reef (Debian trixie) or tentacle (Debian sid)"
    [[ -z $CLIENTS_OPT || ( $CLIENTS_OPT =~ ^[1-9][0-9]?$ && $CLIENTS_OPT -le 16 ) ]] || die "--clients must be 1..16"
    [[ -z $CLIENTS_OPT || $CMD == up ]] || die "--clients belongs to 'up' (exec and delay take --client I)"
    [[ -z $CLIENTS_OPT || $SWITCH_MODE == 1 ]] || die "--clients needs --switch (client namespaces exist only on the delay switch)"
    [[ -z $CLIENT_OPT || $CLIENT_OPT =~ ^[0-9]{1,2}$ ]] || die "--client must be a client index (0..N-1 of up --clients N)"
    [[ -z $CLIENT_OPT || $CMD == exec || ( $CMD == delay && $LINK == client ) ]] ||
        die "--client goes with exec or delay --link client"
    if [[ $SWITCH_MODE == 1 ]]; then
        [[ $NETNS_MODE != 1 ]] || die "--switch and --netns exclude each other"
        [[ -z $SUBNET ]] || die "--switch uses fixed addresses ($SW_PUB.0/25 public, $SW_PUB.128/25 cluster); drop --subnet"
    fi
    if [[ $CMD == delay ]]; then
        [[ $LINK =~ ^(public|cluster|client|all)$ ]] || die "delay needs --link public|cluster|client|all"
        [[ $DELAY_US =~ ^[0-9]{1,8}$ ]] || die "delay needs --us N (whole microseconds, 0..10000000)"
        [[ -z $DELAY_OSD || $DELAY_OSD =~ ^[0-9]{1,2}$ ]] || die "--osd must be an OSD id"
        [[ -z $DELAY_OSD || $LINK != all ]] || die "--osd needs --link public, cluster or client"
    fi
    [[ $CMD != switchctl || ${#CTL_LINES[@]} -gt 0 ]] || die "switchctl needs control lines, e.g. show"
    [[ -z $POOL_SIZE || $POOL_SIZE =~ ^([1-9]|10)$ ]] || die "--size must be 1..10"
    [[ $POOL_PGS =~ ^[1-9][0-9]{0,3}$ ]] || die "--pg-num must be 1..9999"
    [[ $POOL_APP =~ ^[A-Za-z0-9_-]+$ ]] || die "bad --app"
    local spec
    for spec in "${SLOW_FLUSH_OPT[@]}"; do
        [[ $CMD == up ]] || die "--slow-flush osd.I=DUR belongs to 'up' (later: '$PROG slow-flush --osd I --us N')"
        [[ $spec =~ ^osd\.([0-9]{1,2})=([0-9]+)(us|ms|s)?$ ]] || die "bad --slow-flush '$spec': use osd.I=DUR, e.g. osd.1=2ms"
        local us=${BASH_REMATCH[2]}
        case ${BASH_REMATCH[3]} in ms) us=$((us * 1000)) ;; s) us=$((us * 1000000)) ;; esac
        ((us <= 10000000)) || die "--slow-flush '$spec': at most 10 s"
        SLOW_FLUSH_US[${BASH_REMATCH[1]}]=$us
    done
    for spec in "${CLASS_OPT[@]}"; do
        [[ $CMD == up ]] || die "--class osd.I=CLASS belongs to 'up'"
        [[ $spec =~ ^osd\.([0-9]{1,2})=([A-Za-z0-9_-]+)$ ]] || die "bad --class '$spec': use osd.I=CLASS, e.g. osd.1=consumer"
    done
    [[ -z $POOL_CLASS || $POOL_CLASS =~ ^[A-Za-z0-9_-]+$ ]] || die "bad --class '$POOL_CLASS'"
    if [[ $CMD == slow-flush ]]; then
        [[ $DELAY_OSD =~ ^[0-9]{1,2}$ ]] || die "slow-flush needs --osd I"
        [[ $DELAY_US =~ ^[0-9]{1,8}$ ]] || die "slow-flush needs --us N (whole microseconds)"
    fi
    [[ $DIR == /* ]] || DIR=$PWD/$DIR
    DIR=$(realpath -m -- "$DIR")
    [[ $DIR != *[[:space:]]* ]] || die "--dir must not contain whitespace"
    [[ $DIR != / && $DIR != /tmp && $DIR != /root && $DIR != /home && $DIR != "$HOME" ]] ||
        die "refusing to use '$DIR' as cluster directory"
}

set_paths() {
    CONF=$DIR/ceph.conf
    ADMIN_KEYRING=$DIR/ceph.client.admin.keyring
    LOGD=$DIR/log
    RUND=$DIR/run
    SW_CTL=$RUND/netdelay.sock
}

# Loads the M_* values read by read_marker into the working variables.
load_marker_vars() {
    NAME=$M_NAME OSDS=$M_OSDS OBJECTSTORE=$M_OBJECTSTORE NETNS=$M_NETNS VETH=$M_VETH SUBNET=$M_SUBNET
    SWITCH=$M_SWITCH CLIENTS=$M_CLIENTS SLOW_OSDS=$M_SLOW_OSDS
    [[ -n $SWITCH_BIN ]] || SWITCH_BIN=$M_SWITCH_BIN
    RELEASE=$M_RELEASE ROOT=$M_ROOT
    set_root
    set_addrs
}

# Reads DIR/.cephbench (written by us; simple KEY=VALUE lines) into M_* variables.
M_NAME="" M_NETNS="" M_VETH="" M_SUBNET="" M_OSDS="" M_OBJECTSTORE="" M_BOOTSTRAPPED=0 M_SWITCH=0 M_SWITCH_BIN="" M_RELEASE="" M_ROOT="" M_CLIENTS=1 M_SLOW_OSDS=
read_marker() {
    local f=$DIR/$MARKER k v
    [[ -f $f ]] || return 1
    while IFS='=' read -r k v; do
        case $k in
            NAME) M_NAME=$v ;; NETNS) M_NETNS=$v ;; VETH) M_VETH=$v ;; SUBNET) M_SUBNET=$v ;;
            OSDS) M_OSDS=$v ;; OBJECTSTORE) M_OBJECTSTORE=$v ;; BOOTSTRAPPED) M_BOOTSTRAPPED=$v ;;
            SWITCH) M_SWITCH=$v ;; SWITCH_BIN) M_SWITCH_BIN=$v ;; CLIENTS) M_CLIENTS=$v ;;
            RELEASE) M_RELEASE=$v ;; ROOT) M_ROOT=$v ;; SLOW_OSDS) M_SLOW_OSDS=$v ;;
        esac
    done <"$f"
    return 0
}

write_marker() {
    cat >"$DIR/$MARKER.tmp" <<EOF
NAME=$NAME
NETNS=$NETNS
VETH=$VETH
SUBNET=$SUBNET
OSDS=$OSDS
OBJECTSTORE=$OBJECTSTORE
BOOTSTRAPPED=$1
SWITCH=${SWITCH:-0}
SWITCH_BIN=$SWITCH_BIN
CLIENTS=${CLIENTS:-1}
SLOW_OSDS=$SLOW_OSDS
EOF
    [[ -z $ROOT ]] || printf 'RELEASE=%s\nROOT=%s\n' "$RELEASE" "$ROOT" >>"$DIR/$MARKER.tmp"
    mv -f "$DIR/$MARKER.tmp" "$DIR/$MARKER"
}

# Addresses for the chosen mode (NETNS empty = --no-netns).
set_addrs() {
    CLUSTER_NETWORK=127.0.1.0/24
    if [[ ${SWITCH:-0} == 1 ]]; then
        PUB_PREFIX=$SW_PUB
        PUBLIC_NETWORK=$SW_PUB.0/25
        CLUSTER_NETWORK=$SW_PUB.128/25
    elif [[ -n $NETNS ]]; then
        PUB_PREFIX=$SUBNET
        PUBLIC_NETWORK=$SUBNET.0/24
    else
        PUB_PREFIX=127.0.0
        PUBLIC_NETWORK=127.0.0.0/24
    fi
    MON_IP=$PUB_PREFIX.10
    MGR_IP=$MON_IP
    CLIENT_NS=$NETNS
    CLI_NSEXEC=()
    if [[ ${SWITCH:-0} == 1 ]]; then
        MGR_IP=$SW_PUB.11
        CLIENT_NS=$NAME-cli
        CLI_NSEXEC=(ip netns exec "$CLIENT_NS")
    fi
}
# Client I of the switch rig (0 = the first, as before --clients): its switch port label,
# namespace and public address.
cli_label() { if (($1 == 0)); then echo cli; else echo "cli$1"; fi; }
cli_ns() { if (($1 == 0)); then echo "$NAME-cli"; else echo "$NAME-cli$1"; fi; }
cli_ip() { printf '%s.%d' "$SW_PUB" $((100 + $1)); }
# ns_of DAEMON: prints the namespace daemon DAEMON (mon.a, mgr.x, osd.N) runs in ('' = none).
ns_of() {
    if [[ ${SWITCH:-0} == 1 ]]; then
        case $1 in
            mon.*) echo "$NAME-mon" ;; mgr.*) echo "$NAME-mgr" ;; osd.*) echo "$NAME-osd${1#osd.}" ;;
        esac
    else
        echo "$NETNS"
    fi
}
# nsx DAEMON: sets the array NSX to the command prefix that runs in DAEMON's namespace.
nsx() {
    local ns
    ns=$(ns_of "$1")
    NSX=()
    [[ -z $ns ]] || NSX=(ip netns exec "$ns")
}
clients_desc() {
    if ((${CLIENTS:-1} == 1)); then echo "client $CLIENT_NS"; else echo "${CLIENTS} clients $CLIENT_NS, $NAME-cli1..$NAME-cli$((CLIENTS - 1))"; fi
}
net_desc() {
    if [[ ${SWITCH:-0} == 1 ]]; then
        echo "delay switch: a netns per daemon + $(clients_desc), public $PUBLIC_NETWORK, cluster $CLUSTER_NETWORK"
    elif [[ -n $NETNS ]]; then
        echo "netns $NETNS, public $SUBNET.0/24 via host veth $VETH"
    else
        echo "no netns, loopback addresses"
    fi
}
osd_public_ip() { printf '%s.%d' "$PUB_PREFIX" $((20 + $1)); }
osd_cluster_ip() {
    if [[ ${SWITCH:-0} == 1 ]]; then printf '%s.%d' "$SW_PUB" $((148 + $1)); else printf '127.0.1.%d' $((20 + $1)); fi
}

# Every ceph CLI call is bounded. With --switch it runs in the client namespace (the only way
# to reach the cluster's addresses).
CLI_NSEXEC=()
cephc() { timeout 30 "${CLI_NSEXEC[@]}" "${CX[@]}" ceph --connect-timeout 10 -c "$CONF" "$@"; }

# ---------------------------------------------------------------------------------------------
# --release: the chroot holding another Ceph release
# ---------------------------------------------------------------------------------------------
set_root() {
    CX=()
    [[ -z $ROOT ]] || CX=(chroot "$ROOT")
    # tentacle generates keys of a new type (aes256k) by default, which pacific clients
    # (this machine's librados) cannot parse: make classic AES keys and let the mon accept them.
    KEY_TYPE=() MONMAP_CIPHERS=()
    if [[ $RELEASE == tentacle ]]; then
        KEY_TYPE=(--key-type=aes)
        MONMAP_CIPHERS=(--auth-service-cipher aes --auth-allowed-ciphers aes,aes256k
            --auth-preferred-cipher aes)
    fi
}

# Bind-mounts /proc, /sys, /dev and DIR into ROOT (same paths inside), each made private so
# nothing mounted or unmounted below it propagates back to the host.
root_mount() {
    [[ -n $ROOT ]] || return 0
    local d
    for d in /proc /sys /dev "$DIR"; do
        mkdir -p "$ROOT$d"
        if ! mountpoint -q "$ROOT$d"; then
            mount --bind "$d" "$ROOT$d" || die "cannot bind-mount $d into $ROOT"
            mount --make-private "$ROOT$d"
        fi
    done
}

# Undoes root_mount for DIR; /proc, /sys and /dev stay while another cluster directory is
# mounted in the same ROOT (its daemons still need them).
root_umount() {
    [[ -n $ROOT && -d $ROOT ]] || return 0
    local d others
    if mountpoint -q "$ROOT$DIR"; then
        umount "$ROOT$DIR" 2>/dev/null || umount -l "$ROOT$DIR" || log "could not unmount $ROOT$DIR"
    fi
    others=$(findmnt -rn -o TARGET | awk -v r="$ROOT/" 'index($0, r) == 1' |
        grep -Ev "^$ROOT/(proc|sys|dev)(/|\$)" || true)
    if [[ -n $others ]]; then
        log "keeping /proc, /sys, /dev in $ROOT: still in use by $(tr '\n' ' ' <<<"$others")"
        return 0
    fi
    for d in /dev /sys /proc; do
        if mountpoint -q "$ROOT$d"; then
            umount "$ROOT$d" 2>/dev/null || umount -l "$ROOT$d" || log "could not unmount $ROOT$d"
        fi
    done
    log "unmounted $DIR, /proc, /sys, /dev from $ROOT"
}

# ---------------------------------------------------------------------------------------------
# Daemon processes (pid files only)
# ---------------------------------------------------------------------------------------------
# Prints the pid recorded for daemon $1 (e.g. osd.0) if that process is alive and is a ceph-*
# daemon started with -c DIR/ceph.conf; returns 1 otherwise.
daemon_pid() {
    local pf=$RUND/$1.pid pid
    [[ -f $pf ]] || return 1
    pid=$(tr -dc '0-9' <"$pf" 2>/dev/null) || return 1
    [[ -n $pid ]] || return 1
    is_our_daemon "$pid" || return 1
    printf '%s' "$pid"
}

is_our_daemon() {
    local pid=$1 args=() i
    [[ -r /proc/$pid/cmdline ]] || return 1
    mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || return 1
    [[ ${#args[@]} -gt 0 && $(basename -- "${args[0]}") == ceph-* ]] || return 1
    for ((i = 1; i < ${#args[@]}; i++)); do
        if [[ ${args[i]} == -c || ${args[i]} == --conf ]] && [[ ${args[i + 1]:-} == "$CONF" ]]; then
            return 0
        fi
        [[ ${args[i]} != "--conf=$CONF" ]] || return 0
    done
    return 1
}

daemon_names() {
    local n
    echo mon.a
    echo mgr.x
    for ((n = 0; n < ${OSDS:-0}; n++)); do echo "osd.$n"; done
}

# start_daemon TYPE ID: starts ceph-TYPE -i ID unless already running. Ceph daemonises itself;
# the parent returns once the daemon has initialised (or failed).
start_daemon() {
    local type=$1 id=$2 name=$1.$2 rc=0
    if daemon_pid "$name" >/dev/null; then return 0; fi
    rm -f "$RUND/$name.pid"
    nsx "$name"
    local envx=()
    if [[ $type == osd && " $SLOW_OSDS " == *" $id "* ]]; then
        # tools/slowflush: every fsync/fdatasync of this OSD takes the time in its file longer.
        envx=(env "LD_PRELOAD=$RUND/slowflush.so" "CEPHBENCH_SLOW_FLUSH_FILE=$RUND/slowflush.osd.$id")
    fi
    timeout 120 "${NSX[@]}" "${CX[@]}" "${envx[@]}" "ceph-$type" -c "$CONF" -i "$id" \
        </dev/null >>"$LOGD/$name.out" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]]; then
        log "ceph-$type -i $id failed to start (exit $rc)"
        show_logs "$name"
        return 1
    fi
}

show_logs() {
    local name f
    for name in "$@"; do
        for f in "$LOGD/$name.out" "$LOGD/ceph-$name.log"; do
            [[ -s $f ]] || continue
            printf -- '----- last lines of %s -----\n' "$f" >&2
            tail -n 25 "$f" >&2 || true
        done
    done
}

# ---------------------------------------------------------------------------------------------
# Network namespace
# ---------------------------------------------------------------------------------------------
netns_exists() { [[ -e /run/netns/$1 ]]; }

check_subnet_free() {
    # Refuse a subnet the host already uses (other than through our own veth).
    local line
    while read -r line; do
        [[ -n $line ]] || continue
        [[ $line == *" dev $VETH "* || $line == *" dev $VETH" ]] && continue
        die "subnet $SUBNET.0/24 is already in use on this host ($line); pick another with --subnet"
    done < <(ip -4 route show table all 2>/dev/null | awk -v p="$SUBNET." 'index($0, p) == 1 || index($0, "via " p) || index($0, "local " p) || index($0, "broadcast " p)')
    if ip -4 -o addr show | awk '{print $2, $4}' | grep -v "^$VETH " | grep -q " ${SUBNET//./\\.}\."; then
        die "an address in $SUBNET.0/24 is already configured on this host; pick another --subnet"
    fi
}

net_up() {
    [[ ${SWITCH:-0} != 1 ]] || { switch_up; return; }
    [[ -n $NETNS ]] || return 0
    local i
    if ! netns_exists "$NETNS"; then
        ip netns add "$NETNS" ||
            die "cannot create network namespace '$NETNS' (inside a container? use --no-netns)"
    fi
    if ! ip link show dev "$VETH" >/dev/null 2>&1; then
        check_subnet_free
        ip link add "$VETH" type veth peer name ceph0 netns "$NETNS"
    fi
    sysctl -qw "net.ipv6.conf.$VETH.disable_ipv6=1" >/dev/null 2>&1 || true
    ip netns exec "$NETNS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
    ip netns exec "$NETNS" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
    ip addr replace "$SUBNET.1/24" dev "$VETH"
    ip link set "$VETH" up
    ip -n "$NETNS" link set lo up
    ip -n "$NETNS" addr replace "$MON_IP/24" dev ceph0
    for ((i = 0; i < OSDS; i++)); do
        ip -n "$NETNS" addr replace "$(osd_public_ip "$i")/24" dev ceph0
    done
    ip -n "$NETNS" link set ceph0 up
    # Wait (briefly) for carrier on the host end, then check the host routes MON_IP via the veth.
    for ((i = 0; i < 50; i++)); do
        [[ $(cat "/sys/class/net/$VETH/operstate" 2>/dev/null) == up ]] && break
        sleep 0.1
    done
    [[ $(ip -4 route get "$MON_IP" 2>/dev/null) == *" dev $VETH "* ]] ||
        die "host does not route $MON_IP through $VETH: $(ip -4 route get "$MON_IP" 2>&1)"
    if command -v ping >/dev/null; then
        ping -c1 -W2 "$MON_IP" >/dev/null 2>&1 || die "host cannot ping $MON_IP through $VETH"
    fi
}

net_down() {
    local netns=$1 veth=$2
    if [[ -n $veth ]] && ip link show dev "$veth" >/dev/null 2>&1; then
        ip link del "$veth" 2>/dev/null || true
    fi
    if [[ -n $netns ]] && netns_exists "$netns"; then
        ip netns del "$netns" 2>/dev/null || log "could not delete netns $netns"
    fi
}

# ---------------------------------------------------------------------------------------------
# The delay switch (--switch)
# ---------------------------------------------------------------------------------------------
# Finds the cephbench-netdelay binary: --switch-bin, $CEPHBENCH_NETDELAY, PATH, then the newer
# of the repository's target/release and target/debug builds.
resolve_switch_bin() {
    if [[ -n $SWITCH_BIN ]]; then
        [[ -x $SWITCH_BIN ]] && { SWITCH_BIN=$(realpath -- "$SWITCH_BIN"); return 0; }
        die "switch binary '$SWITCH_BIN' is not executable (build it: cargo build --workspace)"
    fi
    local c best=""
    for c in "${CEPHBENCH_NETDELAY:-}" "$(command -v cephbench-netdelay 2>/dev/null || true)"; do
        [[ -n $c && -x $c ]] && { SWITCH_BIN=$(realpath -- "$c"); return 0; }
    done
    for c in "$SCRIPT_DIR/../target/release/cephbench-netdelay" "$SCRIPT_DIR/../target/debug/cephbench-netdelay"; do
        [[ -x $c ]] || continue
        [[ -z $best || $c -nt $best ]] && best=$c
    done
    [[ -n $best ]] || die "cephbench-netdelay not found: build it (cargo build --workspace) or pass --switch-bin PATH"
    SWITCH_BIN=$(realpath -- "$best")
}

# The switch's TAP for port LABEL, while it is still in the root namespace (<= 15 chars,
# distinct per cluster directory).
sw_tap() { printf 'nd%s%s' "$(printf '%s' "$DIR" | cksum | awk '{printf "%05x", $1 % 1048576}')" "$1"; }

# One line per switch port: LABEL SEGMENT NAMESPACE INTERFACE ADDRESS/PREFIX.
sw_ports() {
    local i
    echo "mon public $NAME-mon eth0 $MON_IP/25"
    echo "mgr public $NAME-mgr eth0 $MGR_IP/25"
    for ((i = 0; i < ${CLIENTS:-1}; i++)); do
        echo "$(cli_label "$i") public $(cli_ns "$i") eth0 $(cli_ip "$i")/25"
    done
    # Client 0 also sits on the cluster network, as a tool run on an OSD node does.
    echo "clic cluster $(cli_ns 0) eth1 $SW_PUB.140/25"
    for ((i = 0; i < OSDS; i++)); do
        echo "osd$i public $NAME-osd$i eth0 $(osd_public_ip "$i")/25"
        echo "osd${i}c cluster $NAME-osd$i eth1 $(osd_cluster_ip "$i")/25"
    done
}

# Prints the switch's pid if DIR/run/netdelay.pid names a running cephbench-netdelay serving
# this DIR's control socket.
switch_pid() {
    local pf=$RUND/netdelay.pid pid args=() i
    [[ -f $pf ]] || return 1
    pid=$(tr -dc '0-9' <"$pf" 2>/dev/null) || return 1
    [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
    mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || return 1
    [[ ${#args[@]} -gt 0 && $(basename -- "${args[0]}") == cephbench-netdelay ]] || return 1
    for ((i = 1; i + 1 < ${#args[@]}; i++)); do
        if [[ ${args[i]} == --ctl && ${args[i + 1]} == "$SW_CTL" ]]; then
            printf '%s' "$pid"
            return 0
        fi
    done
    return 1
}

sw_ctl() {
    switch_pid >/dev/null || die "the delay switch of $DIR is not running (restart it: $PROG up --dir $DIR)"
    [[ -x $SWITCH_BIN ]] || resolve_switch_bin
    "$SWITCH_BIN" ctl --ctl "$SW_CTL" "$@"
}

# Starts the switch (unless it runs) and gives every namespace its interface(s).
switch_up() {
    local lines=() l label seg ns ifc addr tap args=() i
    mapfile -t lines < <(sw_ports)
    if ! switch_pid >/dev/null; then
        [[ -x $SWITCH_BIN ]] || resolve_switch_bin
        for l in "${lines[@]}"; do
            read -r label seg ns ifc addr <<<"$l"
            tap=$(sw_tap "$label")
            ! ip link show dev "$tap" >/dev/null 2>&1 || die "interface $tap already exists (another switch?)"
            args+=(--port "$label=$tap@$seg")
        done
        rm -f "$SW_CTL"
        # Its own session: it outlives this script and is stopped by `down`.
        setsid "$SWITCH_BIN" run --ctl "$SW_CTL" "${args[@]}" </dev/null >>"$LOGD/netdelay.log" 2>&1 &
        echo $! >"$RUND/netdelay.pid"
        for ((i = 0; i < 100; i++)); do
            "$SWITCH_BIN" ctl --ctl "$SW_CTL" ping >/dev/null 2>&1 && break
            switch_pid >/dev/null || break
            sleep 0.1
        done
        if ! "$SWITCH_BIN" ctl --ctl "$SW_CTL" ping >/dev/null 2>&1; then
            tail -n 5 "$LOGD/netdelay.log" >&2 || true
            die "the delay switch did not start (log: $LOGD/netdelay.log)"
        fi
        log "delay switch up (pid $(cat "$RUND/netdelay.pid"), ${#lines[@]} ports, control $SW_CTL)"
    fi
    for l in "${lines[@]}"; do
        read -r label seg ns ifc addr <<<"$l"
        if ! netns_exists "$ns"; then
            ip netns add "$ns" || die "cannot create network namespace '$ns'"
        fi
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
        ip -n "$ns" link set lo up
        if ! ip -n "$ns" link show dev "$ifc" >/dev/null 2>&1; then
            tap=$(sw_tap "$label")
            ip link show dev "$tap" >/dev/null 2>&1 ||
                die "switch port $tap is missing; run '$PROG down --dir $DIR' and 'up' again"
            ip link set dev "$tap" netns "$ns"
            ip -n "$ns" link set dev "$tap" name "$ifc"
        fi
        ip -n "$ns" link set dev "$ifc" mtu "$SW_MTU" txqueuelen 10000
        ip -n "$ns" addr replace "$addr" dev "$ifc"
        ip -n "$ns" link set dev "$ifc" up
    done
}

# Stops the switch (its TAPs vanish with it) and deletes the namespaces NAME-{mon,mgr,cli,osdI}.
switch_down() {
    local pid ns i
    if pid=$(switch_pid); then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            [[ -d /proc/$pid ]] || break
            sleep 0.1
        done
        log "stopped the delay switch (pid $pid)"
    fi
    rm -f "$SW_CTL" "$RUND/netdelay.pid"
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NAME-(mon|mgr|cli[0-9]*|osd[0-9]+)\$" || true); do
        ip netns del "$ns" 2>/dev/null || log "could not delete netns $ns"
    done
    log "removed namespaces $NAME-{mon,mgr,cli,cliN,osdN}"
}

# ---------------------------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------------------------
write_conf() {
    local fsid=$1 size min_size i
    size=$((OSDS < 3 ? OSDS : 3))
    min_size=$((OSDS < 3 ? 1 : 2))
    {
        cat <<EOF
# Generated by containers/cluster.sh ($OSDS OSD(s), $OBJECTSTORE, $(net_desc)).
# Clients: ceph -c $CONF -s    or    export CEPH_CONF=$CONF
[global]
fsid = $fsid
mon initial members = a
mon host = [v2:$MON_IP:3300,v1:$MON_IP:6789]
public network = $PUBLIC_NETWORK
cluster network = $CLUSTER_NETWORK
keyring = $ADMIN_KEYRING
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
osd pool default size = $size
osd pool default min size = $min_size
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 1
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 5
mon data avail crit = 2
# PG/OSD stats reach the mgr every second (default 5 s): readiness checks see changes sooner.
mgr stats period = 1

[mon]
mon data = $DIR/\$name
keyring = $DIR/\$name/keyring
log file = $LOGD/\$cluster-\$name.log
run dir = $RUND
admin socket = $RUND/\$cluster-\$name.asok
pid file = $RUND/\$name.pid
mgr initial modules = iostat

[mon.a]
public addr = $MON_IP

[mgr]
mgr data = $DIR/\$name
keyring = $DIR/\$name/keyring
log file = $LOGD/\$cluster-\$name.log
run dir = $RUND
admin socket = $RUND/\$cluster-\$name.asok
pid file = $RUND/\$name.pid

[mgr.x]
public addr = $MGR_IP

[osd]
osd data = $DIR/\$name
keyring = $DIR/\$name/keyring
log file = $LOGD/\$cluster-\$name.log
run dir = $RUND
admin socket = $RUND/\$cluster-\$name.asok
pid file = $RUND/\$name.pid
osd objectstore = $OBJECTSTORE
osd memory target = $((896 * 1024 * 1024))
osd recovery sleep hdd = 0
osd recovery max active = 8
osd max backfills = 8
osd crush update on start = true
EOF
        if [[ -n $RELEASE ]]; then
            # quincy and later schedule with mClock, which ignores the recovery limits above
            # unless told otherwise.
            echo "osd mclock override recovery settings = true"
            [[ $RELEASE != tentacle ]] || printf '\n[mon]\nmon auth allow insecure key = true\n'
        fi
        if [[ $OBJECTSTORE == bluestore ]]; then
            cat <<EOF
bluestore block create = true
bluestore block size = $((10 * 1024 * 1024 * 1024))
bluestore fsck on mount = false
EOF
        else
            cat <<EOF
memstore device bytes = $((4 * 1024 * 1024 * 1024))
EOF
        fi
        for ((i = 0; i < OSDS; i++)); do
            cat <<EOF

[osd.$i]
public addr = $(osd_public_ip "$i")
cluster addr = $(osd_cluster_ip "$i")
crush location = root=default host=$NAME-h$i
EOF
        done
    } >"$CONF.tmp"
    mv -f "$CONF.tmp" "$CONF"
}

bootstrap() {
    local fsid i t
    fsid=$(cat /proc/sys/kernel/random/uuid)
    write_conf "$fsid"

    # Keys: mon., client.admin, mgr.x and osd.0..N-1 are all generated up front and imported
    # into the mon's auth database by ceph-mon --mkfs (saves one CLI round trip per daemon).
    local monkr=$DIR/mon.keyring
    (
        umask 077
        "${CX[@]}" ceph-authtool --create-keyring "$monkr" --gen-key "${KEY_TYPE[@]}" -n mon. --cap mon 'allow *' >/dev/null
        "${CX[@]}" ceph-authtool --create-keyring "$ADMIN_KEYRING" --gen-key "${KEY_TYPE[@]}" -n client.admin \
            --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
        "${CX[@]}" ceph-authtool "$monkr" --import-keyring "$ADMIN_KEYRING" >/dev/null
        mkdir -p "$DIR/mgr.x"
        "${CX[@]}" ceph-authtool --create-keyring "$DIR/mgr.x/keyring" --gen-key "${KEY_TYPE[@]}" -n mgr.x \
            --cap mon 'allow profile mgr' --cap osd 'allow *' --cap mds 'allow *' >/dev/null
        "${CX[@]}" ceph-authtool "$monkr" --import-keyring "$DIR/mgr.x/keyring" >/dev/null
        for ((i = 0; i < OSDS; i++)); do
            mkdir -p "$DIR/osd.$i"
            "${CX[@]}" ceph-authtool --create-keyring "$DIR/osd.$i/keyring" --gen-key "${KEY_TYPE[@]}" -n "osd.$i" \
                --cap mon 'allow profile osd' --cap mgr 'allow profile osd' --cap osd 'allow *' >/dev/null
            "${CX[@]}" ceph-authtool "$monkr" --import-keyring "$DIR/osd.$i/keyring" >/dev/null
        done
    )
    chmod 0600 "$ADMIN_KEYRING"

    "${CX[@]}" monmaptool --create "${MONMAP_CIPHERS[@]}" --fsid "$fsid" --addv a "[v2:$MON_IP:3300,v1:$MON_IP:6789]" \
        "$DIR/monmap" >/dev/null
    "${CX[@]}" ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$monkr" \
        >>"$LOGD/mon.a.out" 2>&1 || { show_logs mon.a; die "ceph-mon --mkfs failed"; }

    t=$(now)
    start_daemon mon a
    wait_mon
    log "mon.a up at $MON_IP ($(elapsed "$t") s)"
    start_daemon mgr x

    # OSD ids: `ceph osd new UUID ID`; the same UUID must go to ceph-osd --mkfs --osd-uuid.
    local uuids=() pids=() rc=0
    for ((i = 0; i < OSDS; i++)); do
        uuids[i]=$(cat /proc/sys/kernel/random/uuid)
        local got
        got=$(cephc osd new "${uuids[i]}" "$i" 2>>"$LOGD/bootstrap.err") ||
            die "ceph osd new failed: $(tail -n 3 "$LOGD/bootstrap.err")"
        [[ $got == "$i" ]] || die "ceph osd new returned id '$got', expected $i"
    done
    t=$(now)
    for ((i = 0; i < OSDS; i++)); do
        nsx "osd.$i"
        timeout 300 "${NSX[@]}" "${CX[@]}" ceph-osd -c "$CONF" -i "$i" --mkfs --osd-uuid "${uuids[i]}" \
            </dev/null >>"$LOGD/osd.$i.out" 2>&1 &
        pids[i]=$!
    done
    for ((i = 0; i < OSDS; i++)); do
        if ! wait "${pids[i]}"; then rc=1; log "ceph-osd -i $i --mkfs failed"; show_logs "osd.$i"; fi
    done
    [[ $rc -eq 0 ]] || die "OSD mkfs failed"
    log "$OSDS OSD(s) created ($OBJECTSTORE, $(elapsed "$t") s)"
    start_osds
}

start_osds() {
    local i pids=() rc=0
    for ((i = 0; i < OSDS; i++)); do
        start_daemon osd "$i" &
        pids[i]=$!
    done
    for ((i = 0; i < OSDS; i++)); do
        wait "${pids[i]}" || rc=1
    done
    [[ $rc -eq 0 ]] || die "some OSDs failed to start"
}

wait_mon() {
    local deadline=$((SECONDS + 30))
    until cephc mon stat >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            show_logs mon.a
            die "mon.a did not answer within 30 s"
        fi
        sleep 0.3
    done
}

# Polls until all OSDs are up and in and the mgr is available. Returns 1 on timeout.
READY_MSG=""
cluster_ready() {
    local osd mgr n_osd n_up n_in
    osd=$(cephc osd stat -f json 2>/dev/null) || { READY_MSG="mon not answering"; return 1; }
    osd=$(pyjson '"%s %s %s" % (d.get("num_osds", 0), d.get("num_up_osds", 0), d.get("num_in_osds", 0))' <<<"$osd")
    read -r n_osd n_up n_in <<<"$osd"
    mgr=$(cephc mgr stat -f json 2>/dev/null | pyjson 'd.get("available", False)') || mgr=false
    READY_MSG="osds: $n_up up / $n_in in / $n_osd total (want $OSDS); mgr available: $mgr"
    [[ $n_osd -eq $OSDS && $n_up -eq $OSDS && $n_in -eq $OSDS && $mgr == true ]]
}

wait_ready() {
    local deadline=$((SECONDS + TIMEOUT)) last=""
    while ! cluster_ready; do
        if [[ $READY_MSG != "$last" ]]; then log "waiting: $READY_MSG"; last=$READY_MSG; fi
        if ((SECONDS >= deadline)); then
            log "TIMEOUT after $TIMEOUT s: $READY_MSG"
            local names=(mon.a) i
            [[ $READY_MSG == *"mgr available: true"* ]] || names+=(mgr.x)
            for ((i = 0; i < OSDS; i++)); do names+=("osd.$i"); done
            show_logs "${names[@]}"
            return 1
        fi
        sleep 0.5
    done
}

print_env() {
    echo "export CEPH_CONF=$CONF"
    if [[ ${SWITCH:-0} == 1 ]]; then
        echo "export CEPHBENCH_CLIENT_NETNS=$CLIENT_NS"
        echo "# clients must run in netns $CLIENT_NS: $PROG exec --dir $DIR -- CMD"
        local c
        for ((c = 1; c < ${CLIENTS:-1}; c++)); do
            echo "# client $c ($(cli_ip "$c")) in netns $(cli_ns "$c"): $PROG exec --dir $DIR --client $c -- CMD"
        done
    fi
}
try_hint() {
    if [[ ${SWITCH:-0} == 1 ]]; then
        echo "# try: $PROG exec --dir $DIR -- ceph -s"
    else
        echo "# try: ceph -c $CONF -s"
    fi
}

# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------
on_signal() {
    trap - INT TERM
    local j
    # Our own background jobs only (parallel mkfs/start); daemons stay for `down`.
    for j in $(jobs -p); do kill -TERM "$j" 2>/dev/null || true; done
    log "interrupted"
    exit 130
}

# Once `up` has created anything, a failure tells how to clean up.
UP_TOUCHED=0
on_up_exit() {
    local rc=$?
    if [[ $rc -ne 0 && $UP_TOUCHED == 1 ]]; then
        log "up failed (exit $rc); logs in $LOGD/; clean up with: $PROG down --dir $DIR"
        # --release: with no daemon left running, nothing needs the chroot's mounts any more.
        if [[ -n $ROOT ]]; then
            local n running=0
            for n in $(daemon_names); do daemon_pid "$n" >/dev/null && running=1; done
            [[ $running == 1 ]] || root_umount
        fi
    fi
}

cmd_up() {
    local t0 restart=0
    t0=$(now)
    trap on_signal INT TERM
    trap on_up_exit EXIT
    if read_marker; then
        # An existing cluster directory: the recorded configuration wins; refuse conflicts.
        [[ -z $OSDS || $OSDS == "$M_OSDS" ]] || die "cluster in $DIR has $M_OSDS OSD(s); run '$PROG down --dir $DIR' first"
        [[ -z $OBJECTSTORE || $OBJECTSTORE == "$M_OBJECTSTORE" ]] || die "cluster in $DIR uses $M_OBJECTSTORE; run '$PROG down --dir $DIR' first"
        [[ -z $NAME || $NAME == "$M_NAME" ]] || die "cluster in $DIR is named $M_NAME; run '$PROG down --dir $DIR' first"
        [[ $NETNS_MODE != 0 || -z $M_NETNS ]] || die "cluster in $DIR uses netns $M_NETNS; run '$PROG down --dir $DIR' first"
        [[ $NETNS_MODE != 1 || -n $M_NETNS ]] || die "cluster in $DIR uses loopback, not a netns; run '$PROG down --dir $DIR' first"
        [[ -z $SUBNET || -z $M_NETNS || $SUBNET == "$M_SUBNET" ]] || die "cluster in $DIR uses subnet $M_SUBNET"
        [[ $SWITCH_MODE != 1 || $M_SWITCH == 1 ]] || die "cluster in $DIR was not made with --switch; run '$PROG down --dir $DIR' first"
        [[ -z $CLIENTS_OPT || $CLIENTS_OPT == "$M_CLIENTS" ]] || die "cluster in $DIR has $M_CLIENTS client namespace(s); run '$PROG down --dir $DIR' first"
        [[ -z $RELEASE || $RELEASE == "$M_RELEASE" ]] || die "cluster in $DIR runs ${M_RELEASE:-the host Ceph}, not $RELEASE; run '$PROG down --dir $DIR' first"
        load_marker_vars
        [[ $M_BOOTSTRAPPED == 1 ]] ||
            die "$DIR holds a half-made cluster from a failed 'up'; run '$PROG down --dir $DIR' first"
        local all=1 n
        for n in $(daemon_names); do daemon_pid "$n" >/dev/null || all=0; done
        [[ $SWITCH != 1 ]] || switch_pid >/dev/null || all=0
        if [[ $all == 1 ]] && cluster_ready; then
            log "cluster '$NAME' in $DIR is already running and healthy ($READY_MSG)"
            print_env
            try_hint
            return 0
        fi
        log "restarting cluster '$NAME' in $DIR"
        restart=1
        UP_TOUCHED=1
    else
        if [[ -e $DIR ]] && [[ -n $(ls -A "$DIR" 2>/dev/null) ]]; then
            die "$DIR exists and is not a cluster directory made by $PROG; remove it or use --dir"
        fi
        NAME=${NAME:-$DEFAULT_NAME} OSDS=${OSDS:-1} OBJECTSTORE=${OBJECTSTORE:-bluestore}
        SWITCH=${SWITCH_MODE:-0} CLIENTS=${CLIENTS_OPT:-1}
        if [[ $SWITCH == 1 ]]; then
            NETNS="" VETH="" SUBNET=""
            resolve_switch_bin
            local ns c
            for ((c = 1; c < CLIENTS; c++)); do
                netns_exists "$NAME-cli$c" && die "netns '$NAME-cli$c' already exists (another switched cluster named $NAME? use --name or '$PROG down')"
            done
            for ns in "$NAME-mon" "$NAME-cli"; do
                netns_exists "$ns" && die "netns '$ns' already exists (another switched cluster named $NAME? use --name or '$PROG down')"
            done
        elif [[ $NETNS_MODE != 1 ]]; then
            NETNS="" VETH="" SUBNET=""
        else
            NETNS=$NAME
            VETH=cb-$NAME
            VETH=${VETH:0:15}
            SUBNET=${SUBNET:-$DEFAULT_SUBNET}
            netns_exists "$NETNS" && die "netns '$NETNS' already exists (another cluster? use --name or '$PROG down')"
            ip link show dev "$VETH" >/dev/null 2>&1 && die "interface '$VETH' already exists (use another --name)"
        fi
        set_addrs
        if [[ -n $NETNS ]]; then
            check_subnet_free
        elif [[ $SWITCH == 1 ]]; then
            :
        elif command -v ss >/dev/null && [[ -n $(ss -Hltn src "$MON_IP" 2>/dev/null) ]]; then
            die "$MON_IP already has listening sockets (another --no-netns cluster on this host?)"
        fi
        for cmd in ceph ceph-mon ceph-mgr ceph-osd ceph-authtool monmaptool; do
            [[ -z $RELEASE ]] || break
            command -v "$cmd" >/dev/null || die "$cmd not found (install ceph-mon ceph-osd ceph-mgr ceph-common)"
        done
        [[ $(id -u) -eq 0 ]] || die "must run as root"
        if [[ -n $RELEASE ]]; then
            ROOT=$("$SCRIPT_DIR/release-root.sh" "$RELEASE" --print-root) ||
                die "cannot prepare the $RELEASE root (see above; run: $SCRIPT_DIR/release-root.sh $RELEASE)"
            [[ $DIR != "$ROOT" && $DIR != "$ROOT"/* ]] || die "--dir must not be inside $ROOT"
            set_root
            for cmd in ceph ceph-mon ceph-mgr ceph-osd ceph-authtool monmaptool; do
                [[ -x $ROOT/usr/bin/$cmd ]] || die "$cmd not found in $ROOT (rebuild it: rm -rf $ROOT; $SCRIPT_DIR/release-root.sh $RELEASE)"
            done
        fi
        UP_TOUCHED=1
        mkdir -p "$DIR"
        chmod 0755 "$DIR"
        mkdir -p "$LOGD" "$RUND"
        setup_slow_flush
        write_marker 0
    fi

    root_mount
    net_up
    if [[ $restart == 1 ]]; then
        start_daemon mon a
        wait_mon
        start_daemon mgr x
        # OSDs that are not running may still be "up" in the osdmap (killed, or stopped after
        # the mon): mark them down so readiness waits for their real boot.
        local i stale=()
        for ((i = 0; i < OSDS; i++)); do daemon_pid "osd.$i" >/dev/null || stale+=("$i"); done
        if [[ ${#stale[@]} -gt 0 ]]; then
            cephc osd down "${stale[@]}" >/dev/null 2>&1 || true
        fi
        start_osds
    else
        log "bootstrapping '$NAME' in $DIR: $OSDS OSD(s), $OBJECTSTORE, $(net_desc)"
        bootstrap
        write_marker 1
    fi
    wait_ready || exit 1
    set_classes
    local took
    took=$(elapsed "$t0")
    log "cluster '$NAME' ready in $took s: $READY_MSG"
    echo "# cluster '$NAME' up in $took s ($OSDS OSD(s), $OBJECTSTORE, mon $MON_IP)"
    [[ -z $ROOT ]] || echo "# daemons: $("${CX[@]}" ceph --version | cut -d' ' -f1-5) from $ROOT"
    print_env
    try_hint
}

# stop_wait PID...: waits (bounded) for the signalled daemons to exit, then SIGKILLs stragglers.
stop_wait() {
    local pid deadline=$((SECONDS + 15))
    for pid in "$@"; do
        while is_our_daemon "$pid"; do
            if ((SECONDS >= deadline)); then
                log "pid $pid did not exit; sending SIGKILL"
                kill -KILL "$pid" 2>/dev/null || true
                sleep 0.2
                break
            fi
            sleep 0.1
        done
    done
}

cmd_down() {
    local netns="" veth="" names=() n pid pids=()
    if read_marker; then
        netns=$M_NETNS veth=$M_VETH OSDS=$M_OSDS NAME=$M_NAME SWITCH=$M_SWITCH ROOT=$M_ROOT
    elif [[ -n $NAME ]]; then
        # No marker (never got that far): fall back to the name given on the command line.
        netns=$NAME veth=cb-$NAME veth=${veth:0:15}
    fi
    # Daemons: every pid file in DIR/run. OSDs first (so they can tell the mon they are going
    # down: a kept cluster then restarts with a truthful osdmap), then mgr, then mon.
    local group
    if [[ -d $RUND ]]; then
        for group in 'osd.*' 'mgr.*' 'mon.*' '*'; do
            names=() pids=()
            for n in "$RUND"/$group.pid; do
                [[ -e $n ]] || continue
                n=$(basename "$n" .pid)
                pid=$(daemon_pid "$n") || continue
                log "stopping $n (pid $pid)"
                kill -TERM "$pid" 2>/dev/null || true
                pids+=("$pid")
            done
            stop_wait "${pids[@]}"
        done
    fi
    # Stragglers without a pid file (an interrupted `ceph-osd --mkfs`, a daemon killed before
    # it wrote its pid file): only processes that is_our_daemon verifies, i.e. a ceph-* binary
    # started with `-c DIR/ceph.conf` - never anything of another cluster.
    pids=()
    for n in /proc/[0-9]*; do
        pid=${n#/proc/}
        [[ $pid != "$$" ]] || continue
        if is_our_daemon "$pid"; then
            log "stopping pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-80))"
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
    done
    stop_wait "${pids[@]}"
    [[ ${SWITCH:-0} != 1 ]] || switch_down
    root_umount
    if [[ -n $netns ]]; then
        net_down "$netns" "$veth"
        log "removed netns $netns and veth $veth"
    fi
    if [[ $KEEP == 1 ]]; then
        log "kept $DIR"
    elif [[ -d $DIR ]]; then
        if [[ -f $DIR/$MARKER || -f $CONF ]]; then
            rm -rf --one-file-system -- "$DIR"
            log "removed $DIR"
        else
            log "$DIR does not look like a cluster directory; not removing it"
        fi
    fi
}

cmd_status() {
    read_marker || { echo "no cluster in $DIR"; return 1; }
    load_marker_vars
    echo "cluster:     $NAME ($OSDS OSD(s), $OBJECTSTORE)"
    [[ -z $ROOT ]] || echo "release:     $RELEASE (daemons from $ROOT)"
    echo "dir:         $DIR"
    echo "conf:        $CONF"
    echo "keyring:     $ADMIN_KEYRING"
    local swok=1
    if [[ $SWITCH == 1 ]]; then
        local sp
        echo "network:     delay switch; public $PUBLIC_NETWORK, cluster $CLUSTER_NETWORK; client netns $CLIENT_NS; mon $MON_IP"
        local c
        for ((c = 0; c < CLIENTS; c++)); do
            printf '  client %-2d netns %s, %s (switch port %s)\n' "$c" "$(cli_ns "$c")" "$(cli_ip "$c")" "$(cli_label "$c")"
        done
        if sp=$(switch_pid); then
            echo "  switch   running (pid $sp, control $SW_CTL)"
        else
            echo "  switch   stopped"
            swok=0
        fi
    elif [[ -n $NETNS ]]; then
        local ns=missing
        netns_exists "$NETNS" && ns=present
        echo "network:     netns $NETNS ($ns), host veth $VETH = $SUBNET.1, mon $MON_IP"
    else
        echo "network:     loopback (no netns), mon $MON_IP"
    fi
    local n pid running=0 total=0
    for n in $(daemon_names); do
        total=$((total + 1))
        if pid=$(daemon_pid "$n"); then
            printf '  %-8s running (pid %s)\n' "$n" "$pid"
            running=$((running + 1))
        else
            printf '  %-8s stopped\n' "$n"
        fi
    done
    if [[ $running -gt 0 ]] && daemon_pid mon.a >/dev/null; then
        timeout 20 "${CLI_NSEXEC[@]}" "${CX[@]}" ceph --connect-timeout 10 -c "$CONF" -s || true
    fi
    [[ $running -eq $total && $swok == 1 ]]
}

cmd_env() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    print_env
}

cmd_exec() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    export CEPH_CONF=$CONF
    if [[ -n $CLIENT_OPT ]]; then
        [[ $SWITCH == 1 ]] || die "--client: the cluster in $DIR was not started with --switch (it has no client namespaces)"
        client_in_range "$CLIENT_OPT"
        CLI_NSEXEC=(ip netns exec "$(cli_ns "$CLIENT_OPT")")
    fi
    exec "${CLI_NSEXEC[@]}" "${EXEC_ARGS[@]}"
}

# Dies unless client I exists (up --clients N made 0..N-1).
client_in_range() {
    (($1 < CLIENTS)) || die "--client $1: the cluster has $CLIENTS client namespace(s) (0..$((CLIENTS - 1))); more need 'down' and 'up --switch --clients N'"
}

cmd_delay() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    [[ $SWITCH == 1 ]] || die "the cluster in $DIR was not started with --switch: it has no delay switch"
    local us=$DELAY_US o=$DELAY_OSD lines=()
    [[ -z $o || $o -lt $OSDS ]] || die "--osd $o: the cluster has $OSDS OSD(s) (0..$((OSDS - 1)))"
    case $LINK in
        all) lines=("delay * * $us") ;;
        public)
            if [[ -n $o ]]; then lines=("delay osd$o @public $us" "delay @public osd$o $us")
            else lines=("delay @public @public $us"); fi ;;
        cluster)
            if [[ -n $o ]]; then lines=("delay osd${o}c @cluster $us" "delay @cluster osd${o}c $us")
            else lines=("delay @cluster @cluster $us"); fi ;;
        client)
            local c first=0 last=$((CLIENTS - 1)) l
            if [[ -n $CLIENT_OPT ]]; then
                client_in_range "$CLIENT_OPT"
                first=$CLIENT_OPT last=$CLIENT_OPT
            fi
            for ((c = first; c <= last; c++)); do
                l=$(cli_label "$c")
                if [[ -n $o ]]; then lines+=("delay $l osd$o $us" "delay osd$o $l $us")
                else lines+=("delay $l @public $us" "delay @public $l $us"); fi
            done ;;
    esac
    sw_ctl "${lines[@]}" >/dev/null
    log "one-way delay $us us on the $LINK link${CLIENT_OPT:+ of client $CLIENT_OPT}${o:+ of osd.$o} (a round trip gains $((2 * us)) us)"
}

# --slow-flush: builds the shim into RUND and writes each named OSD's delay file.
setup_slow_flush() {
    [[ ${#SLOW_FLUSH_US[@]} -gt 0 ]] || return 0
    local src=$SCRIPT_DIR/../tools/slowflush/slowflush.c id
    [[ -f $src ]] || die "--slow-flush needs $src (the repository's tools/)"
    command -v cc >/dev/null || die "--slow-flush builds a small C shim: install gcc (or clang)"
    [[ -z $RELEASE ]] || die "--slow-flush runs only with this machine's own Ceph (not --release)"
    cc -O2 -shared -fPIC -o "$RUND/slowflush.so" "$src" -ldl || die "building $src failed"
    for id in "${!SLOW_FLUSH_US[@]}"; do
        [[ $id -lt $OSDS ]] || die "--slow-flush osd.$id: the cluster has $OSDS OSD(s)"
        printf '%s\n' "${SLOW_FLUSH_US[$id]}" >"$RUND/slowflush.osd.$id"
        SLOW_OSDS="$SLOW_OSDS $id"
    done
    SLOW_OSDS=${SLOW_OSDS# }
    log "slow flush: $(for id in "${!SLOW_FLUSH_US[@]}"; do printf 'osd.%s +%s us ' "$id" "${SLOW_FLUSH_US[$id]}"; done)"
}

# --class osd.I=CLASS: sets CRUSH device classes once the OSDs are in.
set_classes() {
    local spec id class
    for spec in "${CLASS_OPT[@]}"; do
        [[ $spec =~ ^osd\.([0-9]{1,2})=(.+)$ ]]
        id=${BASH_REMATCH[1]} class=${BASH_REMATCH[2]}
        [[ $id -lt $OSDS ]] || die "--class osd.$id: the cluster has $OSDS OSD(s)"
        cephc osd crush rm-device-class "osd.$id" >/dev/null 2>&1 || true
        cephc osd crush set-device-class "$class" "osd.$id" >/dev/null 2>&1 ||
            die "cannot set class $class on osd.$id"
        log "osd.$id: device class $class"
    done
}

cmd_slow_flush() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    [[ " $SLOW_OSDS " == *" $DELAY_OSD "* ]] ||
        die "osd.$DELAY_OSD was not started with --slow-flush (this cluster's: ${SLOW_OSDS:-none}); run '$PROG down' and 'up --slow-flush osd.$DELAY_OSD=0'"
    printf '%s\n' "$DELAY_US" >"$RUND/slowflush.osd.$DELAY_OSD.tmp"
    mv -f "$RUND/slowflush.osd.$DELAY_OSD.tmp" "$RUND/slowflush.osd.$DELAY_OSD"
    # The shim re-reads the file at most every 100 ms.
    sleep 0.2
    log "osd.$DELAY_OSD: every fsync/fdatasync takes $DELAY_US us longer"
}

cmd_switchctl() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    [[ $SWITCH == 1 ]] || die "the cluster in $DIR was not started with --switch: it has no delay switch"
    sw_ctl "${CTL_LINES[@]}"
}

cmd_pool() {
    read_marker || die "no cluster in $DIR (run '$PROG up' first)"
    load_marker_vars
    if [[ $POOL_CMD == delete ]]; then
        cephc osd pool rm "$POOL_NAME" "$POOL_NAME" --yes-i-really-really-mean-it
        return
    fi
    local size min_size t0 deadline last="" msg check pg_num
    size=${POOL_SIZE:-$((OSDS < 3 ? OSDS : 3))}
    [[ $size -le $OSDS ]] || die "--size $size needs at least $size OSDs; the cluster has $OSDS"
    min_size=$((size - size / 2))
    t0=$(now)
    # Size at creation (a later size change would re-peer every PG); an existing pool is kept.
    local rule=()
    if [[ -n $POOL_CLASS ]]; then
        cephc osd crush rule create-replicated "cb-$POOL_CLASS" default host "$POOL_CLASS" >&2 ||
            die "cannot make CRUSH rule cb-$POOL_CLASS (no OSD of class $POOL_CLASS? see '$PROG up --class')"
        rule=("cb-$POOL_CLASS")
    fi
    cephc osd pool create "$POOL_NAME" "$POOL_PGS" "$POOL_PGS" replicated "${rule[@]}" "--size=$size" >&2
    local cur cur_size cur_min
    cur=$(cephc osd pool ls detail -f json | pyjson "\" \".join(str(p[k]) for p in d if p['pool_name'] == '$POOL_NAME' for k in ('size', 'min_size', 'pg_num'))")
    read -r cur_size cur_min pg_num <<<"$cur"
    [[ -n $pg_num ]] || die "pool $POOL_NAME not found after creation"
    [[ $pg_num == "$POOL_PGS" ]] || log "pool $POOL_NAME already exists with pg_num $pg_num; keeping it"
    if [[ $cur_size != "$size" ]]; then
        cephc osd pool set "$POOL_NAME" size "$size" --yes-i-really-mean-it >&2
    fi
    if [[ $cur_min != "$min_size" ]]; then
        cephc osd pool set "$POOL_NAME" min_size "$min_size" >&2
    fi
    cephc osd pool application enable "$POOL_NAME" "$POOL_APP" --yes-i-really-mean-it >&2
    deadline=$((SECONDS + TIMEOUT))
    # First the pool's own PGs (one CLI call per poll), then the cluster-wide `pg stat`.
    for check in pool_pgs_clean all_pgs_clean; do
        while ! msg=$($check); do
            if [[ $msg != "$last" ]]; then log "waiting: $msg"; last=$msg; fi
            if ((SECONDS >= deadline)); then
                die "pool $POOL_NAME not active+clean after $TIMEOUT s: $msg"
            fi
            sleep 0.5
        done
    done
    if [[ $POOL_APP == rbd ]]; then
        timeout 30 "${CLI_NSEXEC[@]}" "${CX[@]}" rbd -c "$CONF" pool init "$POOL_NAME" >&2 || log "rbd pool init failed (pool is usable anyway)"
    fi
    log "pool $POOL_NAME: size $size, min_size $min_size, pg_num $pg_num, app $POOL_APP; active+clean in $(elapsed "$t0") s"
}

# pool_pgs_clean / all_pgs_clean succeed silently when all PGs of pool POOL_NAME (pg_num of
# them) / of the cluster (at least pg_num) are active+clean; otherwise print what is missing.
pool_pgs_clean() {
    local out n c
    out=$(cephc pg ls-by-pool "$POOL_NAME" -f json 2>/dev/null | pyjson '"%d %d" % (lambda s: (len(s), sum(1 for p in s if p.get("state") == "active+clean")))(d["pg_stats"] if isinstance(d, dict) else d)') ||
        { echo "pg list not available yet"; return 1; }
    read -r n c <<<"$out"
    [[ $n -eq $pg_num && $c -eq $pg_num ]] && return 0
    echo "pool $POOL_NAME: $c of $pg_num PGs active+clean ($n reported)"
    return 1
}

all_pgs_clean() {
    local out n c
    out=$(cephc pg stat -f json 2>/dev/null | pyjson '(lambda s: "%d %d" % (s.get("num_pgs", 0), sum(x["num"] for x in s.get("num_pg_by_state", []) if x["name"] == "active+clean")))(d.get("pg_summary", d))') ||
        { echo "pg stat not available yet"; return 1; }
    read -r n c <<<"$out"
    [[ $n -ge $pg_num && $c -eq $n ]] && return 0
    echo "cluster: $c of $n PGs active+clean"
    return 1
}

main() {
    parse_args "$@"
    set_paths
    case $CMD in
        up) cmd_up ;;
        down) cmd_down ;;
        status) cmd_status ;;
        env) cmd_env ;;
        pool) cmd_pool ;;
        exec) cmd_exec ;;
        delay) cmd_delay ;;
        switchctl) cmd_switchctl ;;
        slow-flush) cmd_slow_flush ;;
    esac
}

main "$@"
