#!/usr/bin/env bash
# The test command: formatting and lints, then every test, the cluster tests
# against a real throwaway Ceph cluster started here (1 mon, 1 mgr, 3
# bluestore OSD on loopback addresses) and stopped afterwards, also on
# failure. With CEPHBENCH_TEST_CONF already set, that cluster is used instead.
set -euo pipefail
cd "$(dirname "$0")/.."

# The slower release job (tests/release.sh): `tests/run.sh --release reef`.
[[ ${1:-} != --release ]] || exec bash tests/release.sh "${@:2}"

# Each step's time, on stderr, so a slow CI run says where its minutes went.
step() { echo "tests/run.sh: $1 done at ${SECONDS} s" >&2; }

# The debug builds link with mold where it is installed (containers/install-deps.sh installs
# it): a relink of every target took 31 s with GNU ld here, 14 s with mold. The package's
# release build (packaging/build-deb.sh, below) links as a user's build would.
if command -v mold >/dev/null; then
    export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=$PWD/tests/cc-mold.sh
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
step clippy
cargo build --workspace --all-targets
step build

# On the way out (also on failure): the package's background build (below) stopped, the cluster
# started here stopped.
dir="" deb_build=""
# Each cluster test's time (tests/common: Turn), the slowest printed once the tests are done.
export CEPHBENCH_TEST_TIMES=$PWD/target/cluster-test-times.txt
rm -f "$CEPHBENCH_TEST_TIMES"
times_report() {
    [[ -n ${CEPHBENCH_TEST_TIMES:-} && -s $CEPHBENCH_TEST_TIMES ]] || return 0
    echo "tests/run.sh: the cluster tests' turns, slowest first (of $(wc -l <"$CEPHBENCH_TEST_TIMES"), $(awk '{s += $1} END {printf "%.0f", s}' "$CEPHBENCH_TEST_TIMES") s in all):" >&2
    # sed reads to the end: `head` would leave sort writing to a closed pipe, and under pipefail
    # its SIGPIPE (exit 141) failed a green run.
    sort -rn "$CEPHBENCH_TEST_TIMES" | sed -n '1,25p' >&2
    mv "$CEPHBENCH_TEST_TIMES" "$CEPHBENCH_TEST_TIMES.done"
}
on_exit() {
    times_report
    [[ -z $deb_build ]] || kill -- "-$deb_build" 2>/dev/null || true # its process group (setsid)
    [[ -z $dir ]] || bash containers/cluster.sh down --dir "$dir" >&2 || true
}
trap on_exit EXIT

if [[ -z ${CEPHBENCH_TEST_CONF:-} ]]; then
    dir=/tmp/cephbench-test
    bash containers/cluster.sh down --dir "$dir" >/dev/null 2>&1 || true
    bash containers/cluster.sh up --dir "$dir" --name cbtest --osds 3 >/dev/null
    export CEPHBENCH_TEST_CONF=$dir/ceph.conf
fi

# The cluster tests are one test binary (tests/cluster/, a module per topic)
# and take turns within it (common::serial); cargo runs the binaries one after
# another, so one cluster serves them all. They are marked #[ignore] (plain
# `cargo test` needs no cluster and lists them as ignored); here they run with
# the rest.
# Cluster tests that hold a time to a bound share two cores with the cluster; a loaded moment can
# push one out of it. At most 3 failed cluster tests run once more, alone, and are named either way;
# a failure anywhere else, or in more tests, or again, fails the job.
rc=0
cargo test --workspace --no-fail-fast -- --include-ignored 2>&1 | tee target/cargo-test.log || rc=$?
step "cargo test"
if ((rc != 0)); then
    failed=$(bash tests/failed-tests.sh target/cargo-test.log)
    echo "tests/run.sh: failed: ${failed:-(no test named: a build or harness error)}" >&2
    cluster_only=$(grep -v '^tests/cluster/main.rs ' <<<"$failed" || true)
    names=$(sed -n 's|^tests/cluster/main.rs ||p' <<<"$failed")
    if [[ -n $failed && -z $cluster_only ]] && (($(wc -w <<<"$names") <= 3)); then
        echo "tests/run.sh: running once more, alone: $names" >&2
        # shellcheck disable=SC2086 # one argument per test name
        cargo test --test cluster -- --include-ignored --exact $names
        echo "tests/run.sh: passed on the second run (the first failed, see above): $names" >&2
        step "cargo test, second run"
    else
        exit "$rc"
    fi
fi
times_report
# Later runs of cluster tests (valgrind's subset) are not timed into the list again.
unset CEPHBENCH_TEST_TIMES

# The package check's release build (packaging/build-deb.sh: ~3.5 min of CPU from nothing) needs no
# cluster and times nothing, so it runs in the background from here on, next to valgrind, the
# benchmark script's quick run and the container job, none of which holds a time to a bound (the
# cluster tests above had the machine to themselves). target/release has a cargo lock of its own:
# the debug builds below do not wait for it.
setsid env -u CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER bash packaging/build-deb.sh >target/ci-deb.path 2>target/ci-deb.log &
deb_build=$!

# The FFI layer's tests once more under valgrind memcheck (a short subset).
bash tests/valgrind.sh
step valgrind

# The benchmark script's arithmetic (steady-state CPU per op from two runs, the targets), no cluster.
python3 -m unittest discover -s perf -p 'test_*.py'

# The benchmark script against its peers, short (~35 s), on the debug binaries built above, so it
# cannot rot: it fails on any script or tool error and asserts nothing about speed.
bash perf/run.sh --quick --debug-build --conf "$CEPHBENCH_TEST_CONF" --out target/bench-quick.json
step "perf --quick"

# The containerized single-node cluster (containers/Containerfile, built here: ~5.5 min from
# nothing, ~1.5 min with the image cached) and a job against it from the host, then checks
# that stopping it - and the host daemons' `cluster.sh down` - leave nothing behind.
bash tests/container.sh
step "container job"

# The Debian package (packaging/build-deb.sh, started after cargo test: a release build, its size
# printed), installed with
# `apt install ./cephbench_*.deb` in a clean bookworm root without Rust (debootstrapped once, cached
# under /var/cache/cephbench) and run from there against this cluster: rados write/seq, cleanup, an
# rbd job, `man cephbench-rados`, the completions, missing/too-old libraries (tests/deb.sh).
wait "$deb_build" || { cat target/ci-deb.log >&2; echo "tests/run.sh: packaging/build-deb.sh failed" >&2; exit 1; }
deb_build=""
cat target/ci-deb.log >&2
step "deb build (in the background since cargo test)"
bash tests/deb.sh --deb "$(tail -n 1 target/ci-deb.path)" --conf "$CEPHBENCH_TEST_CONF"
step "deb package"
