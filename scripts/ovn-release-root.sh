#!/usr/bin/env bash
# Makes (once) and checks a Debian root holding one OVN release's real
# packages — ovn-northd, ovsdb-server, ovn-nbctl/ovn-sbctl/ovn-trace — for
# the goldens and the differential tests of a release that is not the
# host's (25.03.0 from trixie, 26.03.1 from sid). Prints the root's path.
#
# Usage: scripts/ovn-release-root.sh SUITE PACKAGE-VERSION
#   SUITE            Debian suite: trixie, sid, ...
#   PACKAGE-VERSION  the exact ovn-central version the release's goldens were
#                    made with (release/release.go; `aclc releases` lists them)
#
# The root is cached outside the repository, in $ACLC_OVN_ROOTS (default
# /var/cache/aclc) as ovn-root-SUITE, and reused. It is made with
#   debootstrap --variant=minbase --include=ovn-central,ovn-host,openvswitch-switch SUITE ROOT MIRROR
# where MIRROR is $ACLC_DEBIAN_MIRROR, else the Debian mirror apt already
# uses here. A root whose ovn-central/ovn-host version is not PACKAGE-VERSION
# is an error (sid moves on): rebuild it from a snapshot mirror that has that
# version (ACLC_DEBIAN_MIRROR=http://snapshot.debian.org/archive/debian/DATE),
# or make new goldens with testdata/regen.sh and record the new version.
set -euo pipefail
suite=${1:?usage: ovn-release-root.sh SUITE PACKAGE-VERSION}
want=${2:?usage: ovn-release-root.sh SUITE PACKAGE-VERSION}
cache=${ACLC_OVN_ROOTS:-/var/cache/aclc}
root=$cache/ovn-root-$suite
die() { echo "ovn-release-root.sh: $*" >&2; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/.ovn-root-$suite.lock"
flock 9
if [ ! -x "$root/usr/bin/ovn-northd" ]; then
  [ "$(id -u)" -eq 0 ] || die "building $root needs root (debootstrap)"
  command -v debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; } ||
    die "cannot install debootstrap"
  mirror=${ACLC_DEBIAN_MIRROR:-}
  [ -n "$mirror" ] || mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || die "no Debian mirror configured for apt; set ACLC_DEBIAN_MIRROR"
  echo "ovn-release-root.sh: debootstrap $suite into $root from $mirror (about a minute)" >&2
  rm -rf "$root.tmp"
  debootstrap --variant=minbase --include=ovn-central,ovn-host,openvswitch-switch \
    "$suite" "$root.tmp" "$mirror" >"$root.log" 2>&1 || { tail -5 "$root.log" >&2; die "debootstrap $suite failed (log: $root.log)"; }
  mv "$root.tmp" "$root"
fi

for pkg in ovn-central ovn-host; do
  have=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' "$pkg" 2>/dev/null) ||
    die "$root has no $pkg installed"
  [ "$have" = "$want" ] || die "$root has $pkg $have, but the goldens of this release were made with $want.
  Either rebuild the root with that version (rm -rf $root; ACLC_DEBIAN_MIRROR=<a snapshot.debian.org mirror that has it> $0 $suite $want),
  or regenerate the goldens with testdata/regen.sh for the release and record $have in release/release.go."
done
echo "$root"
