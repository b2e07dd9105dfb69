#!/usr/bin/env bash
# Installs what cephbench needs to build, test and run on Debian 12 (bookworm):
# Ceph daemons and CLIs (for the throwaway cluster and the peer tools rados
# bench / rbd bench), librados/librbd headers, libclang for bindgen, fio with
# its rbd engine, iproute2, chromium (headless, for the HTML report's browser
# test), time and python3 (perf/run.sh), sysstat (pidstat: the OSD CPU test), gcc (cluster.sh --slow-flush builds
# tools/slowflush), and the container engine for the containerized cluster
# (podman with runc - crun fails on these machines -, catatonit for --init,
# debootstrap to build the debian:bookworm base image when no registry is
# reachable; see containers/image.sh; tests/deb.sh's clean roots), binutils (objdump, strip:
# packaging/build-deb.sh), prometheus (promtool and a real server for the watch test), iptables (the watch test
# cuts the mons off), and mold (tests/run.sh links the test builds with it: each of
# the ~20 test binaries links in a fraction of GNU ld's time). Idempotent: apt is only called for what is missing.
# The Rust toolchain (cargo >= 1.80) must already be on PATH.
set -euo pipefail

PKGS=(ceph-mon ceph-osd ceph-mgr ceph-common librados-dev libradospp-dev librbd-dev
      libclang-dev clang gcc libc6-dev binutils fio iproute2 procps chromium valgrind
      time python3 sysstat mold prometheus curl iptables
      podman runc catatonit containernetworking-plugins debootstrap)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "install-deps: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    for d in "$HOME/.cargo/bin" /usr/local/cargo/bin; do
        [[ -x $d/cargo ]] && export PATH="$d:$PATH"
    done
fi
command -v cargo >/dev/null 2>&1 || {
    echo "install-deps: cargo not found; install Rust >= 1.80 (https://rustup.rs) and retry" >&2
    exit 1
}
echo "install-deps: ok ($(ceph --version | cut -d' ' -f1-3), $(cargo --version))" >&2
