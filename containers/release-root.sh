#!/usr/bin/env bash
# Prepares a root filesystem holding a newer Ceph release than this machine's
# (Debian 12 ships pacific 16.2), for `containers/cluster.sh up --release R`.
#
#   containers/release-root.sh RELEASE|SUITE [--print-root]
#
# RELEASE is a Ceph release name or the Debian suite that carries it:
#   reef     = trixie  (Debian 13: ceph 18.2.x)
#   tentacle = sid     (unstable:  ceph 20.2.x at the time of writing)
# Debootstraps a minbase chroot of that suite under $CEPHBENCH_ROOTS
# (default /var/cache/cephbench; never inside the repository) and installs
# ceph-mon ceph-osd ceph-mgr ceph-common in it. Idempotent: an existing,
# complete root is reused (delete the directory to rebuild it). Prints the
# root's `ceph --version` on stdout (or, with --print-root, the root's path).
# Needs root and debootstrap (`apt-get install debootstrap`); the mirror is
# $CEPHBENCH_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

die() { echo "release-root: $*" >&2; exit 1; }

[[ $# -ge 1 ]] || die "usage: $0 reef|tentacle|trixie|sid [--print-root]"
case $1 in
    reef | trixie) suite=trixie ;;
    tentacle | sid | unstable) suite=sid ;;
    *) die "unknown release '$1': use reef (trixie) or tentacle (sid)" ;;
esac
print_root=0
[[ ${2:-} == --print-root ]] && print_root=1

roots=${CEPHBENCH_ROOTS:-/var/cache/cephbench}
root=$roots/root-$suite
mirror=${CEPHBENCH_MIRROR:-http://deb.debian.org/debian}
marker=$root/.cephbench-ready

if [[ ! -f $marker ]]; then
    [[ $(id -u) -eq 0 ]] || die "building $root needs root (debootstrap, chroot)"
    command -v debootstrap >/dev/null 2>&1 ||
        die "debootstrap is missing: apt-get install debootstrap"
    mkdir -p "$roots"
    if [[ ! -x $root/usr/bin/apt-get ]]; then
        echo "release-root: debootstrapping $suite into $root (a few minutes)" >&2
        rm -rf "$root"
        debootstrap --variant=minbase "$suite" "$root" "$mirror" >&2 ||
            die "debootstrap $suite failed (see above); the mirror is $mirror"
    fi
    # No daemon may start inside the chroot while packages install.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod +x "$root/usr/sbin/policy-rc.d"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    # sid's Release file expires within days; a mirror snapshot serves it past that.
    echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99cephbench"
    mounted=()
    cleanup() {
        local m
        for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
            m=${mounted[i]}
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done
    }
    trap cleanup EXIT
    for d in proc sys dev; do
        mountpoint -q "$root/$d" || { mount --bind "/$d" "$root/$d"; mounted+=("$root/$d"); }
    done
    echo "release-root: installing ceph in $root" >&2
    chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get update -qq >&2
    chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C \
        apt-get install -y -qq --no-install-recommends \
        ceph-mon ceph-osd ceph-mgr ceph-common iproute2 procps >&2 ||
        die "installing ceph in $root failed (see above)"
    chroot "$root" apt-get clean >&2
    cleanup
    trap - EXIT
    chroot "$root" ceph --version >/dev/null || die "ceph --version fails inside $root"
    touch "$marker"
fi

if ((print_root)); then
    echo "$root"
else
    chroot "$root" ceph --version
fi
