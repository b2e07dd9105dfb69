#!/usr/bin/env bash
# A short subset of the FFI tests (tests/cluster/ceph_layer.rs, in the cluster test binary: object ops, drop
# discipline of the ioctx with ops in flight, image lifecycle (and with a data pool), zero-copy writes
# from Ceph-refcounted buffers) under valgrind
# memcheck, against the cluster named by CEPHBENCH_TEST_CONF. Fails on any
# invalid read/write, use of uninitialised memory, bad free, or a definite
# leak. "Possibly lost" blocks are not errors: Rust's and librados' threads
# keep pointers into the middle of allocations that live until exit.
# valgrind.supp holds the suppressions for known third-party noise (empty
# while none is needed: pacific's librados 16.2.15 ran clean here).
# Takes ~1 min on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CEPHBENCH_TEST_CONF:?set CEPHBENCH_TEST_CONF to the ceph.conf of the test cluster}"
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not installed (containers/install-deps.sh installs it)" >&2; exit 1; }

bin=$(cargo test --test cluster --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*deps\/cluster-[^"]*\)".*/\1/p' | tail -1)
[[ -x $bin ]] || { echo "valgrind.sh: cannot find the cluster test binary" >&2; exit 1; }

start=$(date +%s)
valgrind --tool=memcheck --error-exitcode=1 --errors-for-leak-kinds=definite \
    --leak-check=full --show-leak-kinds=definite --num-callers=40 \
    --suppressions=tests/valgrind.supp \
    "$bin" --test-threads=1 --include-ignored --exact \
    ceph_layer::object_ops_round_trip ceph_layer::dropping_an_ioctx_waits_for_ops_in_flight \
    ceph_layer::image_lifecycle ceph_layer::completion_queue_round_trip_and_drop_in_flight \
    ceph_layer::completion_queue_on_an_image ceph_layer::shared_payload_writes_without_copy \
    ceph_layer::image_with_a_data_pool
echo "valgrind.sh: no memcheck errors, no definite leaks ($(($(date +%s) - start)) s)" >&2
