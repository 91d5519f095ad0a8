#!/usr/bin/env bash
# Regenerates testdata/golden/*.lflows from the oracle: the real ovn-northd
# 23.03. For each fixture it starts from an empty NB, loads the fixture with
# `aclc nb load`, waits until northd has written the SB, and keeps the
# `ovn-sbctl lflow-list` output of the ACL stages. The only rewrite is the
# datapath UUID in each "Datapath:" header: the SB Datapath_Binding UUID
# (random) becomes the NB Logical_Switch UUID it stands for
# (external_ids:logical-switch), which is what aclc prints there.
#
# Usage: testdata/regen.sh [FIXTURE.yaml ...]   (default: all fixtures)
# Needs: apt-get install -y ovn-central ovn-host openvswitch-switch
set -euo pipefail
cd "$(dirname "$0")/.."
command -v ovn-northd >/dev/null || { echo "regen.sh: ovn-northd not found (apt-get install -y ovn-central ovn-host openvswitch-switch)" >&2; exit 1; }
ovn-northd --version | grep -q ' 23\.03\.' || { echo "regen.sh: need ovn-northd 23.03, found: $(ovn-northd --version | head -1)" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/aclc" ./cmd/aclc
for db in nb sb; do
  schema=/usr/share/ovn/ovn-$db.ovsschema
  ovsdb-tool create "$work/$db.db" "$schema"
  ovsdb-server --no-chdir --remote=punix:"$work/$db.sock" --unixctl="$work/$db.ctl" \
    --log-file="$work/$db.log" "$work/$db.db" 2>/dev/null &
  pids+=($!)
done
for db in nb sb; do for _ in $(seq 100); do [ -S "$work/$db.sock" ] && break; sleep 0.05; done; done
ovn-northd --no-chdir --ovnnb-db=unix:"$work/nb.sock" --ovnsb-db=unix:"$work/sb.sock" \
  --unixctl="$work/northd.ctl" --log-file="$work/northd.log" 2>/dev/null &
pids+=($!)
export OVN_NB_DB=unix:$work/nb.sock OVN_SB_DB=unix:$work/sb.sock

stages='ls_in_pre_acl|ls_in_pre_lb|ls_in_pre_stateful|ls_in_acl_hint|ls_in_acl|ls_in_acl_after_lb|ls_in_stateful|ls_out_pre_acl|ls_out_pre_lb|ls_out_pre_stateful|ls_out_acl_hint|ls_out_acl|ls_out_stateful'

fixtures=("$@")
[ ${#fixtures[@]} -eq 0 ] && fixtures=(testdata/fixtures/*.yaml)
for fx in "${fixtures[@]}"; do
  name=$(basename "$fx" .yaml)
  # Empty the NB first (fixtures reuse UUIDs, and one transaction cannot
  # delete and re-insert the same UUID), then load the fixture.
  printf 'nb_global: {options: {}}\n' > "$work/empty.yaml"
  "$work/aclc" nb load --replace --nb "$OVN_NB_DB" "$work/empty.yaml" >/dev/null
  "$work/aclc" nb load --nb "$OVN_NB_DB" "$fx" >/dev/null
  ovn-nbctl --timeout=60 --wait=sb sync
  # SB datapath UUID -> NB logical switch UUID.
  sedargs=()
  for sb in $(ovn-sbctl --bare --columns=_uuid list Datapath_Binding); do
    nb=$(ovn-sbctl get Datapath_Binding "$sb" external_ids:logical-switch 2>/dev/null | tr -d '"') || continue
    [ -n "$nb" ] && sedargs+=(-e "s/($sb)  Pipeline/($nb)  Pipeline/")
  done
  ovn-sbctl lflow-list |
    awk -v re="^  table=[0-9]+ *\\\\(($stages) *\\\\)," '
      /^Datapath: / { hdr = $0; next }
      $0 ~ re { if (hdr != "") { print hdr; hdr = "" } print }' |
    { if [ ${#sedargs[@]} -gt 0 ]; then sed "${sedargs[@]}"; else cat; fi; } > "testdata/golden/$name.lflows.tmp"
  mv "testdata/golden/$name.lflows.tmp" "testdata/golden/$name.lflows"
  echo "regen.sh: $name: $(grep -c '^  table=' "testdata/golden/$name.lflows") flows"
done
