#!/usr/bin/env bash
# image.sh - the container engine and the cephbench cluster image, in one place.
#
#   bash containers/image.sh build          # ensure the base image, build the cluster image,
#                                           # print its tag on stdout (cached by content hash)
#   bash containers/image.sh podman ARGS... # podman with cephbench's flags (below)
#   bash containers/image.sh works          # exit 0 if podman is installed and can run here
#   source containers/image.sh              # defines cb_podman, cb_image_build, cb_podman_works
#
# Every podman call goes through cb_podman, which adds the flags podman 4.3 (Debian 12) needs on
# these machines: --storage-driver vfs --cgroup-manager cgroupfs --runtime runc (crun fails here),
# and a storage root of its own (CEPHBENCH_PODMAN_ROOT, default /var/lib/cephbench/containers;
# run root /run/cephbench-containers), so a user's own podman storage and configuration are never
# touched or mixed with ours. Containers are run by the callers with
# --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 (CB_RUN_FLAGS), outside `ip netns exec`.
#
# The base image (the Containerfile's `FROM debian:bookworm`) is, in order: the one already in
# our storage; a pull (bounded by CEPHBENCH_PULL_TIMEOUT, default 20 s) when a registry is
# reachable; else built locally: `debootstrap --variant=minbase bookworm` from the host's own
# Debian mirror (the first URI of /etc/apt/sources.list{,.d/*}; CEPHBENCH_MIRROR overrides), then
# `podman import`ed as docker.io/library/debian:bookworm. debootstrap writes that mirror into the
# rootfs's sources.list, so apt in the Containerfile's RUN reaches it (the build uses the host's
# network). The cluster image is tagged localhost/cephbench-cluster:<hash of Containerfile and
# cluster.sh>: a change to either rebuilds it; an unchanged one is reused.
# Each step prints its wall time on stderr. Needs root.
set -euo pipefail

CB_CONTAINERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CB_BASE=docker.io/library/debian:bookworm
CB_PODMAN_ROOT=${CEPHBENCH_PODMAN_ROOT:-/var/lib/cephbench/containers}
CB_PODMAN_RUNROOT=${CEPHBENCH_PODMAN_RUNROOT:-/run/cephbench-containers}
CB_PODMAN_FLAGS=(--root "$CB_PODMAN_ROOT" --runroot "$CB_PODMAN_RUNROOT"
    --storage-driver vfs --cgroup-manager cgroupfs --runtime runc --events-backend file)
CB_RUN_FLAGS=(--ulimit nofile=20000:20000 --ulimit nproc=4096:4096)

cb_log() { printf 'image.sh: %s\n' "$*" >&2; }
cb_now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
cb_since() { awk -v a="$1" -v b="$(cb_now)" 'BEGIN { printf "%.1f", b - a }'; }

cb_podman() { podman "${CB_PODMAN_FLAGS[@]}" "$@"; }

# podman is installed and can start a container from an existing image (checked only if an image
# is there; otherwise installed + `podman info` working is enough).
cb_podman_works() {
    command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 || return 1
    [[ $(id -u) -eq 0 ]] || return 1
    timeout 60 podman "${CB_PODMAN_FLAGS[@]}" info >/dev/null 2>&1
}

# The host's Debian mirror: the first deb URI apt uses.
cb_mirror() {
    if [[ -n ${CEPHBENCH_MIRROR:-} ]]; then
        echo "$CEPHBENCH_MIRROR"
        return
    fi
    local m=""
    if [[ -f /etc/apt/sources.list ]]; then
        m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; exit } }' \
            /etc/apt/sources.list)
    fi
    if [[ -z $m ]]; then
        m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
            awk '$1 == "URIs:" && $2 ~ /\/debian\/?$/ { print $2; exit }')
    fi
    if [[ -z $m ]]; then
        m=$(cat /etc/apt/sources.list.d/*.list 2>/dev/null |
            awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\/.*\/debian\/?$/) { print $i; exit } }')
    fi
    echo "${m:-http://deb.debian.org/debian}"
}

cb_base_ensure() {
    if cb_podman image exists "$CB_BASE"; then
        cb_log "base image $CB_BASE: present"
        return
    fi
    local t0
    t0=$(cb_now)
    if timeout "${CEPHBENCH_PULL_TIMEOUT:-20}" podman "${CB_PODMAN_FLAGS[@]}" pull -q "$CB_BASE" \
        >/dev/null 2>&1; then
        cb_log "base image $CB_BASE: pulled in $(cb_since "$t0") s"
        return
    fi
    cb_log "base image $CB_BASE: no registry reachable ($(cb_since "$t0") s); building it with debootstrap"
    command -v debootstrap >/dev/null 2>&1 || {
        cb_log "debootstrap is missing: bash containers/install-deps.sh (or apt-get install debootstrap)"
        return 1
    }
    local mirror tmp
    mirror=$(cb_mirror)
    tmp=$(mktemp -d /var/tmp/cephbench-rootfs.XXXXXX)
    t0=$(cb_now)
    if ! debootstrap --variant=minbase bookworm "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
        tail -n 30 "$tmp/debootstrap.log" >&2
        rm -rf "$tmp"
        cb_log "debootstrap bookworm from $mirror failed (see above)"
        return 1
    fi
    rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* 2>/dev/null || true
    cb_log "debootstrap bookworm from $mirror: $(cb_since "$t0") s"
    t0=$(cb_now)
    local rc=0
    tar -C "$tmp/root" --numeric-owner -c . |
        cb_podman import --change 'CMD ["/bin/bash"]' - "$CB_BASE" >"$tmp/import.log" 2>&1 || rc=$?
    ((rc == 0)) || cat "$tmp/import.log" >&2
    rm -rf "$tmp"
    ((rc == 0)) || { cb_log "podman import failed"; return 1; }
    cb_log "podman import as $CB_BASE: $(cb_since "$t0") s"
}

cb_image_tag() {
    local h
    h=$(cat "$CB_CONTAINERS_DIR/Containerfile" "$CB_CONTAINERS_DIR/cluster.sh" | sha256sum | cut -c1-12)
    echo "localhost/cephbench-cluster:$h"
}

# Ensures the cluster image; prints its tag on stdout.
cb_image_build() {
    local tag t0
    tag=$(cb_image_tag)
    if cb_podman image exists "$tag"; then
        cb_log "cluster image $tag: present (Containerfile and cluster.sh unchanged)"
        echo "$tag"
        return
    fi
    cb_base_ensure
    t0=$(cb_now)
    local ctx
    ctx=$(mktemp -d /var/tmp/cephbench-ctx.XXXXXX)
    cp "$CB_CONTAINERS_DIR/Containerfile" "$CB_CONTAINERS_DIR/cluster.sh" "$ctx/"
    chmod 755 "$ctx/cluster.sh"
    if ! cb_podman build --network host --pull=never -t "$tag" -f "$ctx/Containerfile" "$ctx" \
        >"$ctx/build.log" 2>&1; then
        tail -n 40 "$ctx/build.log" >&2
        rm -rf "$ctx"
        cb_log "podman build failed (see above)"
        return 1
    fi
    rm -rf "$ctx"
    cb_log "podman build $tag: $(cb_since "$t0") s"
    echo "$tag"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    case ${1:-build} in
        build) cb_image_build ;;
        podman) shift; cb_podman "$@" ;;
        works) cb_podman_works ;;
        tag) cb_image_tag ;;
        mirror) cb_mirror ;;
        *) echo "usage: $0 build|podman ARGS...|works|tag|mirror" >&2; exit 2 ;;
    esac
fi
