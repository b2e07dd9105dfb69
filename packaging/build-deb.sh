#!/usr/bin/env bash
# Builds cephbench's Debian package with dpkg-deb and prints its path on stdout.
#
#   bash packaging/build-deb.sh [--out DIR]      # default DIR: $CARGO_TARGET_DIR or target, /deb
#
# 1. cargo build --release of the binary and of tools/docgen (its man pages and completions,
#    generated from the clap definition the binary parses with);
# 2. the package tree:
#      /usr/bin/cephbench                    packaging/cephbench.sh: checks that the loader can
#                                            start the binary (names the packages if not), execs it
#      /usr/lib/cephbench/cephbench          the release binary, stripped
#      /usr/share/man/man1/cephbench*.1.gz   one page per command and subcommand
#      /usr/share/bash-completion/completions/cephbench, /usr/share/zsh/vendor-completions/_cephbench,
#      /usr/share/fish/vendor_completions.d/cephbench.fish
#      /lib/systemd/system/cephbench-watch@.service, /etc/cephbench/watch-default.conf (a
#      conffile), /usr/share/cephbench/{prometheus,grafana}/: the canary, its alert rules and
#      dashboard
#      /usr/share/doc/cephbench/             README.md, docs/, examples/, CHANGELOG.md, copyright,
#                                            changelog.gz (Debian's format: the commit built)
#    Depends: librados2 (>= 16.2), librbd1 (>= 16.2) and nothing else: the binary's other
#    libraries (libc6, libstdc++6, libgcc-s1) are librados2's own dependencies, and the build
#    fails if the binary ever links anything beyond those (checked below with objdump);
# 3. dpkg-deb --root-owner-group --build, reproducible: file times are the last commit's
#    (SOURCE_DATE_EPOCH), gzip -n, modes set here;
# 4. prints the package's size, its Depends and what it holds (stderr).
#
# Why dpkg-deb and not cargo-deb: dpkg-deb is on every Debian machine already, while cargo-deb
# is one more tool to `cargo install` (minutes of compiling on a fresh CI machine); the package
# needs a generation step (tools/docgen) and a wrapper at /usr/bin either way, which a short
# script states plainly. Maintainer: $DEBFULLNAME <$DEBEMAIL> if set.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-deb: $*" >&2; exit 1; }

target=${CARGO_TARGET_DIR:-$PWD/target}
out=$target/deb
while (($#)); do
    case $1 in
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        *) die "usage: $0 [--out DIR]" ;;
    esac
done
for t in cargo dpkg-deb dpkg objdump strip gzip; do
    command -v "$t" >/dev/null 2>&1 || die "$t is missing (apt-get install dpkg binutils gzip; Rust from rustup)"
done

t0=$SECONDS
cargo build --release --locked -p cephbench -p cephbench-docgen --bins >&2
echo "build-deb: release build: $((SECONDS - t0)) s" >&2
bin=$target/release/cephbench
docgen=$target/release/cephbench-docgen

version=$(awk -F'"' '/^\[workspace.package\]/ { w = 1 } w && /^version *=/ { print $2; exit }' Cargo.toml)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "no version in Cargo.toml's [workspace.package]"
arch=$(dpkg --print-architecture)
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
    SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
day=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)

# The binary may link Ceph's two client libraries and what librados2 itself depends on, nothing
# more: anything else would need its own Depends entry.
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }')
for lib in $needed; do
    case $lib in
        librados.so.2 | librbd.so.1 | libstdc++.so.6 | libgcc_s.so.1 | libm.so.6 | libc.so.6 | ld-linux*.so.*) ;;
        *) die "the binary now links $lib: add its package to Depends in $0 (and to docs/install.md)" ;;
    esac
done

maintainer="${DEBFULLNAME:-cephbench maintainers} <${DEBEMAIL:-maintainers@cephbench.invalid}>"

mkdir -p "$out"
stage=$out/cephbench_${version}_${arch}
rm -rf "$stage" "$out/gen"
mkdir -p "$stage/DEBIAN"
"$docgen" "$out/gen" --date "$day" 2>/dev/null

install -D -m 0755 packaging/cephbench.sh "$stage/usr/bin/cephbench"
install -D -m 0755 "$bin" "$stage/usr/lib/cephbench/cephbench"
# As dh_strip does (Debian policy 10.1); the unstripped binary stays in $target/release.
strip --remove-section=.comment --remove-section=.note "$stage/usr/lib/cephbench/cephbench"

man=$stage/usr/share/man/man1
mkdir -p "$man"
for p in "$out"/gen/man/*.1; do
    gzip -9n <"$p" >"$man/$(basename "$p").gz"
done
install -D -m 0644 "$out/gen/completions/cephbench.bash" "$stage/usr/share/bash-completion/completions/cephbench"
install -D -m 0644 "$out/gen/completions/_cephbench" "$stage/usr/share/zsh/vendor-completions/_cephbench"
install -D -m 0644 "$out/gen/completions/cephbench.fish" "$stage/usr/share/fish/vendor_completions.d/cephbench.fish"

doc=$stage/usr/share/doc/cephbench
mkdir -p "$doc/docs" "$doc/examples/ci"
install -m 0644 README.md "$doc/README.md"
install -m 0644 CHANGELOG.md "$doc/CHANGELOG.md"
# A native package's changelog.gz is in Debian's format: one entry, the commit it was built from.
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit="$commit with local changes"
else
    commit="unknown (not a git checkout)"
fi
printf '%s\n' "cephbench ($version) unstable; urgency=medium" "" \
    "  * Built from the cephbench sources, commit $commit." \
    "  * What changed: /usr/share/doc/cephbench/CHANGELOG.md.gz." "" \
    " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")" >"$doc/changelog"
gzip -9n "$doc/changelog"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 examples/*.toml "$doc/examples/"
install -m 0644 examples/ci/* "$doc/examples/ci/"
chmod 0755 "$doc/examples/ci/regression.sh"
install -m 0644 packaging/copyright "$doc/copyright"
# The canary as a service, its config (a conffile) and the Prometheus alert rules.
install -D -m 0644 "packaging/systemd/cephbench-watch@.service" "$stage/lib/systemd/system/cephbench-watch@.service"
install -D -m 0644 packaging/systemd/watch-default.conf "$stage/etc/cephbench/watch-default.conf"
install -D -m 0644 packaging/prometheus/cephbench-watch.rules.yml \
    "$stage/usr/share/cephbench/prometheus/cephbench-watch.rules.yml"
install -D -m 0644 packaging/grafana/cephbench-watch.json "$stage/usr/share/cephbench/grafana/cephbench-watch.json"
# Debian policy 12.3: documentation over 4 KiB compressed (not the copyright, not the examples).
find "$doc" -path "$doc/examples" -prune -o -type f ! -name copyright ! -name '*.gz' -size +4k -print |
    while read -r f; do gzip -9n "$f"; done

installed_kib=$(du -sk --apparent-size "$stage/usr" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: cephbench
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_kib
Depends: librados2 (>= 16.2), librbd1 (>= 16.2)
Section: admin
Priority: optional
Description: Ceph-native storage benchmark (RADOS and RBD)
 cephbench drives RADOS object I/O through librados, as rados bench does, and
 RBD image I/O through librbd, as fio does inside a VM. It reports HDR
 percentiles labelled with which latency they are, a timeline, the OSD that
 served each op beside that OSD's own counters, and where the mean went (the
 public network, the OSD queue, the drive's flushes, the replicas).
 .
 Run it on a mon or OSD node, or any host with a client keyring. It uses the
 node's own librados2 and librbd1 (Ceph 16.2 pacific or newer).
EOF
(cd "$stage" && find usr lib -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
echo /etc/cephbench/watch-default.conf >"$stage/DEBIAN/conffiles"
find "$stage" -type d -exec chmod 0755 {} +
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums" "$stage/DEBIAN/conffiles"
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb=$out/cephbench_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
rm -rf "$stage" "$out/gen"

size=$(stat -c %s "$deb")
{
    echo "build-deb: $deb: $(awk -v s="$size" 'BEGIN { printf "%.1f MiB", s / 1048576 }') ($size bytes), installed $((installed_kib / 1024)) MiB"
    echo "build-deb: Depends: $(dpkg-deb -f "$deb" Depends)"
    echo "build-deb: contents:"
    dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { printf "    %10s %s\n", $3, $6 }'
} >&2
echo "$deb"
