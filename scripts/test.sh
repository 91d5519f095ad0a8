#!/usr/bin/env bash
# Runs every aclc test on a fresh machine: installs what the integration
# tests need (OVN 23.03, Open vSwitch, conntrack-tools, iproute2 on the host;
# the Debian roots of the other OVN releases, cached under /var/cache/aclc
# and checked against the package versions their goldens were made with, by
# scripts/ovn-release-root.sh), then runs
# go vet, all tests (integration tests may not skip here) and a one-iteration
# smoke run of every benchmark so that none of them rots.
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

# The other releases' OVN, each in its Debian root (made once, then reused;
# a root whose OVN is not the goldens' exact version stops the run here).
go run ./cmd/aclc releases | awk 'NR > 1 && $6 !~ /^host/ {print $4, $5}' |
  while read -r suite pkg; do
    bash scripts/ovn-release-root.sh "$suite" "$pkg" >/dev/null
  done

export ACLC_REQUIRE_INTEGRATION=1
go vet ./...

# Verbose into a log (every test's PASS/FAIL/SKIP line is counted), the
# package lines and any failure to the terminal.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
go test -count=1 -timeout 25m -v ./... >"$log" 2>&1 || status=$?
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
