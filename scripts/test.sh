#!/usr/bin/env bash
# Runs every aclc test on a fresh machine: installs what the integration
# tests need (OVN 23.03, Open vSwitch, conntrack-tools, iproute2), then runs
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

export ACLC_REQUIRE_INTEGRATION=1
go vet ./...
go test -count=1 -timeout 20m ./...
go test -count=1 -run '^$' -bench . -benchtime=1x ./... >/dev/null
echo "test.sh: all tests passed"
