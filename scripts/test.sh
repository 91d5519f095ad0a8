#!/usr/bin/env bash
# Runs every aclc test on a fresh machine: installs what the integration
# tests need (OVN 23.03.1, Open vSwitch, conntrack-tools, iproute2 on the
# host; a Debian root for every other Debian-packaged OVN version aclc
# verifies, cached under /var/cache/aclc and checked against the exact
# package version its goldens were made with, by
# scripts/ovn-release-root.sh), says for every verified version how this
# run checks it — live against its real northd, or against its committed
# goldens (source-built versions: CI reaches no source host; a Debian
# version whose suite no longer carries it) — then runs go vet, all tests
# (integration tests may not skip here) and a one-iteration smoke run of
# every benchmark so that none of them rots.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for bin in ovsdb-server ovn-northd ovn-nbctl ovn-sbctl ovn-trace conntrack ip; do
  command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "test.sh: installing packages for: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    ovn-central ovn-host openvswitch-switch conntrack iproute2 >/dev/null
fi

# Every verified version's oracle: the host's packages, a Debian root
# (made once, then reused; several at a time), or a root built from the
# upstream tag, which only a developer machine has. ACLC_GOLDENS_ONLY lists
# the versions whose real northd this run cannot run, with the reason; the
# tests check those against their committed goldens (TestGolden) and skip
# nothing else.
go build -o /tmp/aclc-test.$$ ./cmd/aclc
oracles=$(/tmp/aclc-test.$$ releases --oracles)
rm -f /tmp/aclc-test.$$
rootlog=$(mktemp -d)
while read -r v kind suite pkg; do
  [ "$kind" = debian ] || continue
  bash scripts/ovn-release-root.sh "$suite" "$pkg" >/dev/null 2>"$rootlog/$v" &
done <<<"$oracles"
wait || true
goldens_only=""
while read -r v kind a b c; do
  case $kind in
  host)
    echo "test.sh: OVN $v: live (Debian $a ovn-central $b, this machine's own packages)" ;;
  debian)
    if bash scripts/ovn-release-root.sh "$a" "$b" >/dev/null 2>>"$rootlog/$v"; then
      echo "test.sh: OVN $v: live (Debian $a ovn-central $b)"
    elif grep -q 'now has' "$rootlog/$v"; then
      why="Debian $a no longer carries ovn-central $b ($(grep -o 'now has [^,(]*' "$rootlog/$v" | head -1 | sed 's/ *$//'))"
      echo "test.sh: OVN $v: goldens only — $why"
      goldens_only+="$v: $why"$'\n'
    else
      cat "$rootlog/$v" >&2
      echo "test.sh: cannot make the Debian $a root of OVN $v" >&2
      exit 1
    fi ;;
  source)
    root=${ACLC_OVN_ROOTS:-/var/cache/aclc}/ovn-root-src-$v
    if [ -x "$root/usr/bin/ovn-northd" ]; then
      echo "test.sh: OVN $v: live (source build $a, ${b:0:12}, root $root)"
    else
      echo "test.sh: OVN $v: goldens only — built from upstream tag $a (${b:0:12}), no root here (CI reaches no source host)"
    fi ;;
  esac
done <<<"$oracles"
rm -rf "$rootlog"
export ACLC_GOLDENS_ONLY="$goldens_only"

export ACLC_REQUIRE_INTEGRATION=1
go vet ./...

# Verbose into a log (every test's PASS/FAIL/SKIP line is counted), the
# package lines and any failure to the terminal.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
go test -count=1 -timeout 35m -v ./... >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  grep -vE '^\s*(=== (RUN|PAUSE|CONT|NAME)|--- PASS)' "$log" || true
else
  grep -E '^(ok|FAIL|\?)' "$log" || true
fi
grep -E '^\s*--- SKIP' "$log" || true
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
if [ "$status" -ne 0 ]; then
  echo "go test: $passed passed, $failed failed, $skipped skipped"
  exit "$status"
fi

# Every benchmark once, so that none of them rots.
go test -count=1 -run '^$' -bench . -benchtime=1x ./... >"$log" 2>&1 || { cat "$log"; echo "test.sh: a benchmark failed"; exit 1; }
echo "go test: $passed passed, $failed failed, $skipped skipped"
