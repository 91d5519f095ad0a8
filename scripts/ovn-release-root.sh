#!/usr/bin/env bash
# Makes (once) and checks a Debian root holding one OVN version's real
# packages — ovn-northd, ovsdb-server, ovn-nbctl/ovn-sbctl/ovn-trace — for
# the goldens and the live differential tests of a Debian-packaged version
# that is not the host's (25.03.0 from trixie, 26.03.1 from sid, 26.09.0
# from experimental). Prints the root's path.
#
# Usage: scripts/ovn-release-root.sh SUITE PACKAGE-VERSION
#   SUITE            Debian suite: trixie, sid, experimental (a sid root with
#                    OVN from experimental: experimental is no full suite)
#   PACKAGE-VERSION  the exact ovn-central version the version's goldens were
#                    made with (release/registry.go; `aclc releases` lists them)
#
# Exit status 3 (and a line on stderr saying what the suite has now) when
# the suite no longer carries PACKAGE-VERSION — Debian's archive moves on
# (sid will take 26.09, experimental 27.03): scripts/test.sh then checks
# that version against its committed goldens only. The root is kept for the
# next run either way.
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
  # Several roots are made at once (test.sh): one apt-get at a time, and
  # the first one installs debootstrap for all.
  command -v debootstrap >/dev/null ||
    flock "$cache/.apt.lock" sh -c 'command -v debootstrap >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }' ||
    die "cannot install debootstrap"
  mirror=${ACLC_DEBIAN_MIRROR:-}
  [ -n "$mirror" ] || mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || die "no Debian mirror configured for apt; set ACLC_DEBIAN_MIRROR"
  echo "ovn-release-root.sh: debootstrap $suite into $root from $mirror (about a minute)" >&2
  rm -rf "$root.tmp"
  if [ "$suite" = experimental ]; then
    # A sid base, then OVN from experimental (what experimental lacks, e.g.
    # openvswitch-switch, comes from sid). policy-rc.d: start no daemon; the
    # mirror may be a frozen snapshot past its Valid-Until.
    { debootstrap --variant=minbase sid "$root.tmp" "$mirror" &&
      echo "deb $mirror experimental main" > "$root.tmp/etc/apt/sources.list.d/experimental.list" &&
      printf '#!/bin/sh\nexit 101\n' > "$root.tmp/usr/sbin/policy-rc.d" && chmod +x "$root.tmp/usr/sbin/policy-rc.d" &&
      chroot "$root.tmp" apt-get -o Acquire::Check-Valid-Until=false -o Acquire::Check-Date=false update &&
      chroot "$root.tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        -t experimental ovn-central ovn-host openvswitch-switch &&
      rm -f "$root.tmp/usr/sbin/policy-rc.d" && chroot "$root.tmp" apt-get clean; } >"$root.log" 2>&1 ||
      { tail -5 "$root.log" >&2; die "debootstrap sid + experimental OVN failed (log: $root.log)"; }
  else
    debootstrap --variant=minbase --include=ovn-central,ovn-host,openvswitch-switch \
      "$suite" "$root.tmp" "$mirror" >"$root.log" 2>&1 || { tail -5 "$root.log" >&2; die "debootstrap $suite failed (log: $root.log)"; }
  fi
  mv "$root.tmp" "$root"
fi

for pkg in ovn-central ovn-host; do
  have=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' "$pkg" 2>/dev/null) ||
    die "$root has no $pkg installed"
  if [ "$have" != "$want" ]; then
    # The archive moved on: this root cannot be the oracle of that version
    # (it stays, so the next run does not debootstrap again).
    echo "ovn-release-root.sh: Debian $suite now has $pkg $have, not $want (the archive moved on; a snapshot mirror that still has it: ACLC_DEBIAN_MIRROR=http://snapshot.debian.org/archive/debian/DATE $0 $suite $want)" >&2
    exit 3
  fi
done
echo "$root"
