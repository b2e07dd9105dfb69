#!/usr/bin/env bash
# The slower release job (not part of .ci/run): the cluster tests against a
# newer Ceph release, whose daemons run from a debootstrapped Debian root,
# while cephbench and the tests use this machine's librados (pacific 16.2).
#
#   tests/run.sh --release reef|tentacle [TEST...]
#
# 1. containers/release-root.sh RELEASE (first time: debootstrap + apt, ~5 min,
#    ~0.7 GB under /var/cache/cephbench; later: instant);
# 2. a 3-OSD bluestore cluster of that release in network namespace cb<release>
#    (public network $CEPHBENCH_RELEASE_SUBNET.0/24, default 198.18.18: RFC 2544 benchmarking space;
#    203.0.113 is taken here, the package mirror resolves into it), so it
#    coexists with a loopback cluster on this machine; stopped on exit;
# 3. tests/capture-fixtures.sh into target/fixtures/RELEASE and the fixture
#    tests over it (copy it to tests/fixtures/RELEASE to refresh the committed set);
# 4. each test binary or cluster test module (default: the list below) against the cluster; a summary
#    of which passed. Exit 1 if any failed. `deb` in the list is tests/deb.sh: the
#    package installed with apt in a clean root of that release's Debian suite (its
#    librados/librbd) and run from there against the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

release=${1:?usage: tests/run.sh --release reef|tentacle [TEST...]}
shift
tests=("$@")
((${#tests[@]})) || tests=(release_fixtures ceph_layer rados_cluster rbd_cluster explain_cluster
    suite_cluster security_cluster faults multi_cluster deb)

if ! command -v debootstrap >/dev/null 2>&1; then
    [[ $(id -u) -eq 0 ]] || { echo "release job: debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
    apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; }
fi
bash containers/release-root.sh "$release" >&2

dir=/tmp/cephbench-$release
subnet=${CEPHBENCH_RELEASE_SUBNET:-198.18.18}
bash containers/cluster.sh down --dir "$dir" >/dev/null 2>&1 || true
trap 'bash containers/cluster.sh down --dir "$dir" >&2 || true' EXIT
bash containers/cluster.sh up --dir "$dir" --name "cb$release" --osds 3 --netns \
    --subnet "$subnet" --release "$release" >&2
export CEPHBENCH_TEST_CONF=$dir/ceph.conf

root=$(bash containers/release-root.sh "$release" --print-root)
fixtures=$PWD/target/fixtures/$release
rm -rf "$fixtures"
bash tests/capture-fixtures.sh --conf "$CEPHBENCH_TEST_CONF" --out "$fixtures" \
    --ceph "chroot $root ceph"
export CEPHBENCH_EXTRA_FIXTURES=$fixtures

passed=() failed=()
for t in "${tests[@]}"; do
    echo "===== $t against $release =====" >&2
    if [[ $t == deb ]]; then
        if bash tests/deb.sh --release "$release" --conf "$CEPHBENCH_TEST_CONF"; then passed+=("$t"); else failed+=("$t"); fi
        continue
    fi
    # The cluster tests are one binary, a module per former test file (tests/cluster/): a
    # module runs alone by its name as the filter.
    if [[ -e tests/cluster/$t.rs || -d tests/cluster/$t ]]; then
        run=(cargo test --test cluster -- --include-ignored "$t::")
    else
        run=(cargo test --test "$t" -- --include-ignored)
    fi
    if "${run[@]}"; then passed+=("$t"); else failed+=("$t"); fi
done
echo "release job ($(chroot "$root" ceph --version | cut -d' ' -f3,5)):" \
    "passed: ${passed[*]:-none}; failed: ${failed[*]:-none}" >&2
((${#failed[@]} == 0))
