#!/usr/bin/env bash
# Regenerates testdata/golden/SERIES/*.lflows from the oracle: the real
# ovn-northd of one OVN release. For each fixture it starts from an empty NB
# of that release, loads the fixture with `aclc nb load --ovn-version
# RELEASE`, waits until northd has written the SB, and keeps the release's
# own `ovn-sbctl lflow-list` output of that release's ACL stages. The only
# rewrite is the datapath UUID in each "Datapath:" header: the SB
# Datapath_Binding UUID (random) becomes the NB Logical_Switch UUID it stands
# for (external_ids:logical-switch, or the column nb_uuid from 25.09 on),
# which is what aclc prints there. The exact ovn-central package version
# that produced the goldens goes into testdata/golden/SERIES/PACKAGE.
#
# Usage: testdata/regen.sh RELEASE [FIXTURE.yaml ...]   (default: all fixtures)
#   RELEASE: 23.03, 25.03 or 26.03 (see `aclc releases`)
# The host release (23.03) needs apt-get install -y ovn-central ovn-host
# openvswitch-switch; the others run in the Debian root that
# scripts/ovn-release-root.sh makes (as root).
set -euo pipefail
cd "$(dirname "$0")/.."
rel=${1:?usage: testdata/regen.sh RELEASE [FIXTURE.yaml ...]}
shift

work=$(mktemp -d)
pids=()
rundir=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
  [ -n "$rundir" ] && rm -rf "$rundir"
  return 0
}
trap cleanup EXIT

go build -o "$work/aclc" ./cmd/aclc
# RELEASE NB-SCHEMA SB-SCHEMA DEBIAN PACKAGE NOTES, for the release asked for.
read -r name _ _ suite pkg notes < <("$work/aclc" releases | awk -v r="$rel" 'NR > 1 && (index($1, r ".") == 1 || $1 == r)')
[ -n "${name:-}" ] || { echo "regen.sh: unknown release $rel; supported:" >&2; "$work/aclc" releases >&2; exit 1; }
series=${name%.*}

# The release's ACL stages, as its northd names them (lflow's layout of the
# release: the stages aclc compiles).
stages=$("$work/aclc" releases --acl-stages "$name")

# Where the release's OVN lives: the host, or its Debian root (checked
# against the package version the goldens are for).
if [[ $notes == host* ]]; then
  root=""
  have=$(dpkg-query -W -f='${Version}' ovn-central 2>/dev/null) ||
    { echo "regen.sh: ovn-central not installed (apt-get install -y ovn-central ovn-host openvswitch-switch)" >&2; exit 1; }
  [ "$have" = "$pkg" ] || { echo "regen.sh: host has ovn-central $have, release $name is recorded as $pkg (release/release.go)" >&2; exit 1; }
  rundir=$work/run; inner=$rundir; mkdir -p "$rundir"
  c=()
else
  root=$(bash scripts/ovn-release-root.sh "$suite" "$pkg")
  rundir=$(mktemp -d "$root/tmp/aclc-regen-XXXXXX"); inner=/${rundir#"$root"/}
  c=(chroot "$root")
fi
# "${c[@]}" runs a program of the release (no function: $! must be the
# server's own pid for cleanup).

for db in nb sb; do
  "${c[@]}" ovsdb-tool create "$inner/$db.db" /usr/share/ovn/ovn-$db.ovsschema
  "${c[@]}" ovsdb-server --no-chdir --remote=punix:"$inner/$db.sock" --unixctl="$inner/$db.ctl" \
    --log-file="$inner/$db.log" "$inner/$db.db" 2>/dev/null &
  pids+=($!)
done
for db in nb sb; do for _ in $(seq 100); do [ -S "$rundir/$db.sock" ] && break; sleep 0.05; done; done
"${c[@]}" ovn-northd --no-chdir --ovnnb-db=unix:"$inner/nb.sock" --ovnsb-db=unix:"$inner/sb.sock" \
  --unixctl="$inner/northd.ctl" --log-file="$inner/northd.log" 2>/dev/null &
pids+=($!)
nb=unix:$rundir/nb.sock   # for aclc on the host
nbctl() { "${c[@]}" ovn-nbctl --db=unix:"$inner/nb.sock" "$@"; }
sbctl() { "${c[@]}" ovn-sbctl --db=unix:"$inner/sb.sock" "$@"; }

out=testdata/golden/$series
mkdir -p "$out"
fixtures=("$@")
if [ ${#fixtures[@]} -eq 0 ]; then
  fixtures=(testdata/fixtures/*.yaml)
elif [ -f "$out/PACKAGE" ] && [ "$(cat "$out/PACKAGE")" != "ovn-central $pkg" ]; then
  echo "regen.sh: $out was made with $(cat "$out/PACKAGE"), not $pkg: regenerate all fixtures, not some" >&2; exit 1
fi
printf 'nb_global: {options: {}}\n' > "$work/empty.yaml"
for fx in "${fixtures[@]}"; do
  fname=$(basename "$fx" .yaml)
  # Empty the NB first (fixtures reuse UUIDs, and one transaction cannot
  # delete and re-insert the same UUID) and let northd catch up (26.03.1
  # aborts when one of its runs sees a switch deleted and re-inserted with
  # the same UUID), then load the fixture.
  "$work/aclc" nb load --replace --nb "$nb" "$work/empty.yaml" >/dev/null
  nbctl --timeout=60 --wait=sb sync
  # A fixture that uses something this release lacks (a tier on 23.03)
  # cannot be expressed in its NB: no golden for this release.
  if ! "$work/aclc" nb load --nb "$nb" "$fx" >/dev/null 2>"$work/load.err"; then
    if grep -qE "schema has no|is not one of the allowed values|does not have it" "$work/load.err"; then
      rm -f "$out/$fname.lflows"
      echo "regen.sh: $series/$fname: not expressible in OVN $name ($(head -1 "$work/load.err" | sed 's/^aclc: //'))"
      continue
    fi
    cat "$work/load.err" >&2
    exit 1
  fi
  nbctl --timeout=60 --wait=sb sync
  # SB datapath UUID -> NB logical switch UUID.
  sedargs=()
  for sbuuid in $(sbctl --bare --columns=_uuid list Datapath_Binding); do
    nbuuid=$(sbctl get Datapath_Binding "$sbuuid" external_ids:logical-switch 2>/dev/null | tr -d '"') ||
      nbuuid=$(sbctl --bare --columns=nb_uuid list Datapath_Binding "$sbuuid" 2>/dev/null) || continue
    [ -n "$nbuuid" ] && sedargs+=(-e "s/($sbuuid)  Pipeline/($nbuuid)  Pipeline/")
  done
  sbctl lflow-list |
    awk -v re="^  table=[0-9]+ *\\\\(($stages) *\\\\)," '
      /^Datapath: / { hdr = $0; next }
      $0 ~ re { if (hdr != "") { print hdr; hdr = "" } print }' |
    { if [ ${#sedargs[@]} -gt 0 ]; then sed "${sedargs[@]}"; else cat; fi; } > "$out/$fname.lflows.tmp"
  mv "$out/$fname.lflows.tmp" "$out/$fname.lflows"
  echo "regen.sh: $series/$fname: $(grep -c '^  table=' "$out/$fname.lflows") flows"
done
echo "ovn-central $pkg" > "$out/PACKAGE"
