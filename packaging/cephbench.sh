#!/bin/sh
# /usr/bin/cephbench of the Debian package (packaging/build-deb.sh installs this file there):
# starts the binary, /usr/lib/cephbench/cephbench, once the dynamic loader can.
#
# The binary links librados.so.2 and librbd.so.1. If either is missing, or is so old that a
# symbol the binary needs is not in it (Ceph before 15.2), the loader stops before main() with
# "error while loading shared libraries" or "symbol lookup error", which names a file or a
# mangled symbol but not the package to install. So this wrapper first asks the loader to load
# the binary without running it (LD_TRACE_LOADED_OBJECTS=1 with every symbol bound:
# what `ldd -r` does; ~10 ms) and, if that shows a library not found or a symbol or version
# missing, prints one line naming the packages and exits 1 (cephbench's "could not start").
# Otherwise it execs the binary with the arguments untouched; the binary itself then refuses,
# in one line, librados/librbd that load but are older than 16.2 (pacific), and prints the
# versions it loaded with --version.
#
# CEPHBENCH_BIN overrides the binary's path (tests).
bin=${CEPHBENCH_BIN:-/usr/lib/cephbench/cephbench}

if [ ! -x "$bin" ]; then
    echo "cephbench: error: $bin is missing: reinstall the package (apt install --reinstall cephbench)" >&2
    exit 1
fi

trace=$(LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes "$bin" 2>&1)
problem=$(printf '%s\n' "$trace" | grep -m 1 -E 'not found|undefined symbol|symbol lookup error|error while loading')
if [ -n "$problem" ]; then
    problem=$(printf '%s' "$problem" | tr '\t' ' ' | sed 's/^ *//')
    case $problem in
        *"=> not found"*)
            what="a library cephbench needs is missing (${problem})" ;;
        *GLIBC_* | *GLIBCXX_* | *CXXABI_*)
            echo "cephbench: error: this system's C or C++ runtime is older than the one cephbench was built with (${problem}): use a package built on this Debian or Ubuntu release (packaging/build-deb.sh)" >&2
            exit 1 ;;
        *)
            what="the librados/librbd found are older than Ceph 16.2 (pacific), the oldest cephbench runs with (${problem})" ;;
    esac
    echo "cephbench: error: ${what}: install librados2 and librbd1 16.2 or newer (apt install librados2 librbd1)" >&2
    exit 1
fi
exec "$bin" "$@"
