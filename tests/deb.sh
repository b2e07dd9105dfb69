#!/usr/bin/env bash
# The package check: cephbench's .deb, installed with `apt install ./cephbench_*.deb` in a clean
# Debian root that has no Rust toolchain, run from there against a cluster.
#
#   bash tests/deb.sh [--release pacific|reef|tentacle] [--conf CEPH_CONF [--pool POOL]] [--deb FILE]
#
#   pacific (default)  Debian 12 bookworm's root: librados2/librbd1 16.2 from bookworm
#   reef               Debian 13 trixie's root: 18.2
#   tentacle           sid's root: 20.2 (at the time of writing)
#
# 1. the package: --deb FILE, else packaging/build-deb.sh (a release build) - its size printed;
# 2. a clean client root of that suite: `debootstrap --variant=minbase` plus man-db, zsh and fish
#    (what `man` and the completions need; an operator's node has them), cached under
#    $CEPHBENCH_ROOTS (default /var/cache/cephbench)/client-SUITE with apt's lists and the
#    librados2/librbd1 .debs downloaded but not installed (refreshed after 7 days; delete the
#    directory to rebuild it: ~2-4 min). Each run works on a throwaway overlay of it, so the
#    cached root stays clean. Not the container job's base image: one way for all three suites
#    (there is no trixie or sid image), and nothing of podman's storage to depend on;
# 3. in that root (chroot, empty environment): no cargo/rustc anywhere; `apt install ./....deb`,
#    which must pull librados2 and librbd1 from the suite; `cephbench --version` must name the
#    Ceph release apt installed;
# 4. against the cluster, from the installed binary: rados write, rados seq --verify, cleanup,
#    an rbd job. The cluster: --conf (CI passes its own test cluster; a pool is made and removed
#    unless --pool names one), else one started here of the same release (1 bluestore OSD, netns
#    cbdeb-REL, public network $CEPHBENCH_DEB_SUBNET.0/24, default 198.18.19 / .20 / .21 for
#    pacific / reef / tentacle; stopped on exit);
# 5. `man cephbench-rados` shows the options; after sourcing the bash completion,
#    `complete -p cephbench` names it and it completes `cephbench ra` to rados; zsh's compinit
#    and fish find theirs;
# 6. the libraries' checks: with librbd.so.1 removed, with a librbd lacking symbols
#    (LD_LIBRARY_PATH) and with one that loads but says 1.15 / Ceph 15.2 (LD_PRELOAD), cephbench
#    prints one error line naming the packages to install and exits 1 (the first two from the
#    /usr/bin/cephbench wrapper, before the loader would fail; the last from the binary).
# Each phase's wall time is printed. Needs root, debootstrap, gcc (containers/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: $0 [--release pacific|reef|tentacle] [--conf CEPH_CONF [--pool POOL]] [--deb FILE]"
release=pacific conf="" pool="" deb=""
while (($#)); do
    case $1 in
        --release) release=${2:?$usage}; shift 2 ;;
        --conf) conf=${2:?$usage}; shift 2 ;;
        --pool) pool=${2:?$usage}; shift 2 ;;
        --deb) deb=${2:?$usage}; shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
case $release in
    pacific | bookworm) release=pacific suite=bookworm cluster_release="" net=19 ;;
    reef | trixie) release=reef suite=trixie cluster_release=reef net=20 ;;
    tentacle | sid) release=tentacle suite=sid cluster_release=tentacle net=21 ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
[[ -z $pool || -n $conf ]] || { echo "deb-check: --pool goes with --conf" >&2; exit 2; }

now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)
phase_t=$(now)
phase() { echo "deb-check: $1: $(since "$phase_t") s" >&2; phase_t=$(now); }
fail() { echo "deb-check: FAILED: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, chroot, mounts)"
for t in debootstrap gcc flock; do
    command -v "$t" >/dev/null 2>&1 || fail "$t is missing: bash containers/install-deps.sh"
done

# ---- the package -------------------------------------------------------------------------------
if [[ -z $deb ]]; then
    deb=$(bash packaging/build-deb.sh | tail -n 1)
    phase "package built (packaging/build-deb.sh)"
fi
[[ -f $deb ]] || fail "no package at '$deb'"
deb=$(realpath "$deb")
echo "deb-check: $(basename "$deb"): $(stat -c %s "$deb") bytes; Depends: $(dpkg-deb -f "$deb" Depends)" >&2

# ---- the clean client root ---------------------------------------------------------------------
roots=${CEPHBENCH_ROOTS:-/var/cache/cephbench}
pristine=$roots/client-$suite
ready=$pristine/.cephbench-client-ready
mkdir -p "$roots"
exec 9>"$roots/client-$suite.lock"
flock 9 # one run at a time per cached root (it is the overlay's lower layer)

mounted=()
umount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null || true
    done
    mounted=()
}
mount_sys() { # $1: root
    local d
    for d in proc sys dev; do
        mkdir -p "$1/$d"
        mount --bind "/$d" "$1/$d"
        mounted+=("$1/$d")
    done
}
# Runs a command in root $R with an empty environment (nothing of the host's PATH, cargo or
# Ceph settings), as a login on that machine would.
inroot() {
    local env=(HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
    [[ -z ${CEPH_CONF:-} ]] || env+=("CEPH_CONF=$CEPH_CONF")
    chroot "$R" /usr/bin/env -i "${env[@]}" "$@"
}
apt_in() { inroot env DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Use-Pty=0 "$@"; }

work=""
own_dir=""
made_pool=""
on_exit() {
    local rc=$?
    umount_all
    [[ -z $work ]] || rm -rf "$work"
    if [[ -n $made_pool ]]; then
        timeout 120 bash containers/cluster.sh pool delete "$made_pool" --dir "$(dirname "$conf")" \
            >/dev/null 2>&1 || echo "deb-check: could not delete pool $made_pool" >&2
    fi
    [[ -z $own_dir ]] || timeout 180 bash containers/cluster.sh down --dir "$own_dir" >&2 || true
    exit "$rc"
}
trap on_exit EXIT

if [[ ! -f $ready ]]; then
    mirror=$(bash containers/image.sh mirror)
    echo "deb-check: building the clean $suite root $pristine from $mirror (once; a few minutes)" >&2
    rm -rf "$pristine"
    debootstrap --variant=minbase "$suite" "$pristine" "$mirror" >"$roots/client-$suite.log" 2>&1 ||
        { tail -n 20 "$roots/client-$suite.log" >&2; fail "debootstrap $suite from $mirror"; }
    printf '#!/bin/sh\nexit 101\n' >"$pristine/usr/sbin/policy-rc.d"
    chmod +x "$pristine/usr/sbin/policy-rc.d"
    # sid's Release file expires within days (as in containers/release-root.sh).
    echo 'Acquire::Check-Valid-Until "false";' >"$pristine/etc/apt/apt.conf.d/99cephbench"
    cp /etc/resolv.conf "$pristine/etc/resolv.conf" 2>/dev/null || true
    R=$pristine
    mount_sys "$R"
    { apt_in update -qq && apt_in install -y -qq --no-install-recommends man-db zsh fish; } \
        >>"$roots/client-$suite.log" 2>&1 ||
        { tail -n 20 "$roots/client-$suite.log" >&2; fail "installing man-db zsh fish in $pristine"; }
    umount_all
    phase "clean $suite root built"
fi
if [[ ! -f $ready || -n $(find "$ready" -mtime +7) ]]; then
    # apt's lists and the client libraries' .debs, downloaded only (the root stays clean): a run
    # resolves the package's Depends against these lists and unpacks without the network.
    R=$pristine
    cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
    mount_sys "$R"
    { apt_in update -qq && apt_in install -y -qq --download-only librados2 librbd1; } \
        >>"$roots/client-$suite.log" 2>&1 ||
        { tail -n 20 "$roots/client-$suite.log" >&2; fail "downloading librados2 librbd1 into $pristine"; }
    umount_all
    touch "$ready"
    phase "$suite root: package lists and librados2/librbd1 downloads refreshed"
fi
inst=$(chroot "$pristine" dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null |
    awk '$1 == "ii" && ($2 ~ /^(librados2|librbd1|cephbench|ceph-common|rustc|cargo)$/) { print $2 }')
[[ -z $inst ]] || fail "$pristine is not clean: $inst installed (delete it to rebuild)"

work=$(mktemp -d /var/tmp/cb-deb.XXXXXX)
R=$work/root
mkdir -p "$work/upper" "$work/work" "$R"
if mount -t overlay cb-deb -o "lowerdir=$pristine,upperdir=$work/upper,workdir=$work/work" "$R" 2>/dev/null; then
    mounted+=("$R")
else
    echo "deb-check: no overlayfs here; copying the root instead" >&2
    cp -a "$pristine/." "$R/"
fi
mount_sys "$R"
phase "throwaway root on $pristine"

# ---- the cluster -------------------------------------------------------------------------------
if [[ -z $conf ]]; then
    own_dir=/tmp/cb-deb-$release
    subnet=${CEPHBENCH_DEB_SUBNET:-198.18.$net}
    bash containers/cluster.sh down --dir "$own_dir" >/dev/null 2>&1 || true
    timeout 600 bash containers/cluster.sh up --dir "$own_dir" --name "cbdeb-${release:0:4}" --osds 1 \
        --netns --subnet "$subnet" ${cluster_release:+--release "$cluster_release"} >/dev/null
    conf=$own_dir/ceph.conf
    phase "cluster up (${cluster_release:-pacific}, 1 OSD, netns, $subnet.0/24)"
fi
conf=$(realpath "$conf")
cdir=$(dirname "$conf")
if [[ -z $pool ]]; then
    pool=cbdeb
    timeout 180 bash containers/cluster.sh pool create "$pool" --dir "$cdir" --app rbd >/dev/null
    [[ -n $own_dir ]] || made_pool=$pool
    phase "pool $pool"
fi
# The cluster's directory (ceph.conf names its keyring there) at the same path inside the root.
mkdir -p "$R$cdir"
mount --bind "$cdir" "$R$cdir"
mounted+=("$R$cdir")
export CEPH_CONF=$conf

# ---- install -----------------------------------------------------------------------------------
toolchain=$(inroot sh -c 'command -v cargo rustc rustup; ls -d /root/.cargo /root/.rustup /usr/local/cargo 2>/dev/null' || true)
[[ -z $toolchain ]] || fail "the root has a Rust toolchain: $toolchain"
cp "$deb" "$R/root/"
inroot sh -c "cd /root && DEBIAN_FRONTEND=noninteractive apt install -y ./$(basename "$deb")" \
    >"$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log" >&2; fail "apt install ./$(basename "$deb")"; }
pulled=$(grep -c '^Setting up' "$work/apt.log" || true)
libs=$(inroot dpkg-query -W -f='${Package} ${Version}\n' librados2 librbd1 | paste -sd ' ')
echo "deb-check: apt install ./$(basename "$deb") in the clean $suite root: $pulled packages set up ($libs)" >&2
[[ $(inroot dpkg-query -W -f='${db:Status-Abbrev}' cephbench) == "ii " ]] || fail "cephbench not installed"
phase "apt install ./$(basename "$deb") (no Rust toolchain in the root)"

version=$(inroot cephbench --version) || fail "cephbench --version"
sed 's/^/    /' <<<"$version" >&2
want=$(inroot dpkg-query -W -f='${Version}' librados2 | sed -E 's/^[0-9]+://; s/[-+~].*//')
grep -q "^librados .*(Ceph $want)\$" <<<"$version" ||
    fail "cephbench --version does not name librados2's Ceph $want: $version"
grep -q '^librbd ' <<<"$version" || fail "cephbench --version names no librbd: $version"

# ---- the benchmarks, from the installed binary -------------------------------------------------
cb() {
    echo "\$ cephbench $*" >&2
    inroot timeout 180 cephbench "$@" --progress never >"$work/out.txt" 2>&1 ||
        { cat "$work/out.txt" >&2; fail "cephbench $*"; }
    grep -E 'IOPS:|removed|Removed' "$work/out.txt" | head -n 2 | sed 's/^/    /' >&2 || true
}
cb rados write -p "$pool" -b 4K -t 16 -d 5s --run-name deb --no-cleanup
cb rados seq -p "$pool" -t 16 --run-name deb --verify
cb cleanup -p "$pool" --run-name deb
cb rbd -p "$pool" --size 256M --rw randwrite --bs 4K --iodepth 16 -d 5s --no-precondition
phase "rados write, rados seq --verify, cleanup, rbd randwrite from the installed binary"

# ---- man page and completions ------------------------------------------------------------------
inroot man -P cat cephbench-rados >"$work/man.txt" 2>"$work/man.err" ||
    { cat "$work/man.err" >&2; fail "man cephbench-rados"; }
for opt in --pool --block-size --concurrent-ios --duration --conf; do
    grep -q -- "$opt" "$work/man.txt" || fail "man cephbench-rados does not show $opt"
done
echo "deb-check: man cephbench-rados: $(wc -l <"$work/man.txt") lines, the options shown" >&2
inroot man -w cephbench cephbench-rbd cephbench-sweep-rados >/dev/null || fail "man -w cephbench ..."

bash_c=$(inroot bash -c '. /usr/share/bash-completion/completions/cephbench && complete -p cephbench &&
    COMP_WORDS=(cephbench ra) COMP_CWORD=1 COMP_LINE="cephbench ra" COMP_POINT=12 &&
    _cephbench cephbench ra cephbench && echo "completes: ${COMPREPLY[*]}"') ||
    fail "the bash completion does not load"
sed 's/^/    /' <<<"$bash_c" >&2
grep -q -- '-F _cephbench cephbench$' <<<"$bash_c" || fail "complete -p cephbench: $bash_c"
grep -qw rados <<<"$(grep '^completes:' <<<"$bash_c")" || fail "bash does not complete 'cephbench ra' to rados"
zsh_c=$(inroot zsh -fc 'autoload -Uz compinit && compinit -u -d /tmp/zcompdump && print -r -- $_comps[cephbench]') ||
    fail "zsh compinit"
[[ $zsh_c == _cephbench ]] || fail "zsh's compinit does not find _cephbench (got '$zsh_c')"
fish_c=$(inroot fish -c 'complete -C "cephbench ra"') || fail "fish complete -C"
grep -q '^rados' <<<"$fish_c" || fail "fish does not complete 'cephbench ra' to rados: $fish_c"
echo "deb-check: completions: bash (complete -p cephbench), zsh (compinit: $zsh_c), fish (cephbench ra -> rados)" >&2
phase "man cephbench-rados, bash/zsh/fish completions"

# ---- the canary as a service --------------------------------------------------------------------
for f in /lib/systemd/system/cephbench-watch@.service /etc/cephbench/watch-default.conf \
    /usr/share/cephbench/prometheus/cephbench-watch.rules.yml; do
    [[ -f $R$f ]] || fail "the package does not install $f"
done
inroot dpkg-query --control-show cephbench conffiles | grep -qx /etc/cephbench/watch-default.conf ||
    fail "/etc/cephbench/watch-default.conf is not a conffile"
# The unit's syntax, by the host's systemd (the root has none), its ExecStart pointed at the
# binary installed in the root.
sed "s|/usr/bin/cephbench|$R/usr/bin/cephbench|" "$R/lib/systemd/system/cephbench-watch@.service" \
    >"$work/cephbench-watch@default.service"
systemd-analyze verify --man=no "$work/cephbench-watch@default.service" >"$work/verify.txt" 2>&1 ||
    { cat "$work/verify.txt" >&2; fail "systemd-analyze verify cephbench-watch@.service"; }
# Its command line with the shipped config (the pool set to the test's), stopped as systemd does.
cat >"$R/root/watch-unit.sh" <<'UNIT'
set -a; . /etc/cephbench/watch-default.conf; set +a
CEPHBENCH_WATCH_ARGS=$(echo "$CEPHBENCH_WATCH_ARGS" | sed "s/-p rbd/-p $1/")
cephbench --progress never $CEPHBENCH_CONNECT_ARGS watch $CEPHBENCH_WATCH_ARGS &
pid=$!
sleep 6
kill -TERM $pid
wait $pid
UNIT
inroot sh /root/watch-unit.sh "$pool" >"$work/watch.txt" 2>&1 ||
    { cat "$work/watch.txt" >&2; fail "cephbench watch as the unit runs it did not stop cleanly on SIGTERM"; }
grep -Eq "pool '$pool': [1-9][0-9]* ops completed, 0 failed" "$work/watch.txt" ||
    { cat "$work/watch.txt" >&2; fail "cephbench watch completed no ops, or some failed"; }
grep -q "removed 17 objects" "$work/watch.txt" || { cat "$work/watch.txt" >&2; fail "cephbench watch left objects"; }
sed 's/^/    /' "$work/watch.txt" >&2
phase "cephbench-watch@.service: unit verified, the shipped config's watch stopped by SIGTERM"

# ---- the libraries' checks ---------------------------------------------------------------------
# expect_error WHAT PATTERN CMD...: CMD exits 1 with one stderr line matching PATTERN.
expect_error() {
    local what=$1 pattern=$2 rc=0 err
    shift 2
    err=$(inroot "$@" 2>&1 >/dev/null) || rc=$?
    ((rc == 1)) || fail "$what: exit $rc, not 1: $err"
    [[ $(wc -l <<<"$err") -eq 1 ]] || fail "$what: not one line: $err"
    grep -qE "$pattern" <<<"$err" || fail "$what: '$err' does not match '$pattern'"
    echo "deb-check: $what:" >&2
    echo "    $err" >&2
}
librbd=$(inroot sh -c 'dpkg -L librbd1 | grep "/librbd\.so\.1$"')
mv "$R$librbd" "$R/root/librbd.so.1.away"
expect_error "librbd.so.1 removed" \
    '^cephbench: error: a library cephbench needs is missing \(librbd\.so\.1 => not found\): install librados2 and librbd1' \
    cephbench --version
mv "$R/root/librbd.so.1.away" "$R$librbd"

mkdir -p "$work/stub" "$R/opt/cb-old"
cat >"$work/stub/old.c" <<'EOF'
/* A librbd.so.1 of a release without the symbols cephbench needs (e.g. Ceph 14.2 lacks some). */
void rbd_version(int *major, int *minor, int *extra) { *major = 1; *minor = 12; *extra = 0; }
EOF
cat >"$work/stub/octopus.c" <<'EOF'
/* Preloaded over the real libraries: they load, but say they are octopus's (librbd 1.15, Ceph 15.2). */
void rbd_version(int *major, int *minor, int *extra) { *major = 1; *minor = 15; *extra = 0; }
const char *_Z19ceph_version_to_strv(void) { return "15.2.17"; }
EOF
gcc -shared -fPIC -o "$R/opt/cb-old/librbd.so.1" -Wl,-soname,librbd.so.1 "$work/stub/old.c"
gcc -shared -fPIC -o "$R/opt/cb-old/octopus.so" "$work/stub/octopus.c"
expect_error "a librbd.so.1 without cephbench's symbols (LD_LIBRARY_PATH)" \
    '^cephbench: error: the librados/librbd found are older than Ceph 16\.2 \(pacific\).*: install librados2 and librbd1 16\.2 or newer' \
    env LD_LIBRARY_PATH=/opt/cb-old cephbench --version
expect_error "librbd 1.15 / Ceph 15.2.17 (LD_PRELOAD)" \
    '^cephbench: error: librbd 1\.15\.0 \(Ceph 15\.2\.17\) from /opt/cb-old/octopus\.so is older than Ceph 16\.2 .*apt install librados2 librbd1' \
    env LD_PRELOAD=/opt/cb-old/octopus.so cephbench rados write -p "$pool" -d 1s
inroot env LD_PRELOAD=/opt/cb-old/octopus.so cephbench --version | grep -q '^librbd 1\.15\.0 from /opt/cb-old/octopus\.so$' ||
    fail "--version with librbd 1.15 preloaded does not say so"
phase "missing / too old librados-librbd: one line naming the packages, exit 1"

echo "deb-check: ok: $(basename "$deb") on $suite ($libs) against ${cluster_release:-pacific}" \
    "($(since "$T0") s)" >&2
