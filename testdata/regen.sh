#!/usr/bin/env bash
# Regenerates testdata/golden/VERSION/*.lflows from the oracle: the real
# ovn-northd of one OVN version. It never runs aclc. For each fixture it
# empties the NB, writes the fixture with the version's own ovsdb-client
# (the request is rendered from the fixture by internal/cmd/fixturetxn,
# which reads the fixture and nothing else of aclc; the version's own
# ovsdb-server judges whether its schema can hold it), waits until northd
# has written the SB (ovn-nbctl --wait=sb sync), and keeps the version's
# own `ovn-sbctl lflow-list` for the ACL stages (STAGES below). The only
# rewrite is the datapath UUID in each "Datapath:" header: the SB
# Datapath_Binding UUID (random) becomes the NB Logical_Switch UUID it
# stands for (external_ids:logical-switch, or the column nb_uuid from 25.09
# on), which is what aclc prints there.
#
# The version is what the root's `ovn-northd --version` says; the goldens
# go to testdata/golden/VERSION/, with ORACLE recording where that northd
# came from: the exact Debian package (ovn-central), or, for a root built
# from the upstream tag, the tag, its commit and the openvswitch/ovs commit
# (checked against the fetched repositories in OVN_GIT_DIR / OVS_GIT_DIR:
# the root's northd.c and OVS tree must be the tag's).
#
# Usage: testdata/regen.sh ROOT [FIXTURE.yaml ...]   (default: all fixtures)
#   ROOT: / for the host's packages (apt-get install -y ovn-central ovn-host
#         openvswitch-switch: Debian 12's 23.03.1), a Debian root made by
#         scripts/ovn-release-root.sh SUITE PACKAGE, or a root holding a
#         build from the upstream tag (docs/releases.md), as root.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:?usage: testdata/regen.sh ROOT [FIXTURE.yaml ...]}
shift
root=$(cd "$root" && pwd)

# The ACL stages of every version, by northd's names (the golden test
# checks them against lflow's layout of each version).
STAGES='ls_(in|out)_(pre_acl|pre_lb|pre_stateful|acl_hint|acl|acl_eval|acl_sample|acl_action|acl_after_lb|acl_after_lb_eval|acl_after_lb_sample|acl_after_lb_action|pre_network_function|stateful|network_function)'

work=$(mktemp -d)
pids=()
rundir=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
  [ -n "$rundir" ] && [ "$root" != / ] && rm -rf "$rundir"
  return 0
}
trap cleanup EXIT

if [ "$root" = / ]; then
  c=(); rundir=$work/run; inner=$rundir; mkdir -p "$rundir"
else
  c=(chroot "$root"); rundir=$(mktemp -d "$root/tmp/aclc-regen-XXXXXX"); inner=/${rundir#"$root"/}
fi
# "${c[@]}" runs a program of the version (no function: $! must be the
# server's own pid for cleanup).
version=$("${c[@]}" ovn-northd --version | awk 'NR == 1 {print $2}')
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "regen.sh: $root: ovn-northd --version says '$version'" >&2; exit 1; }

# Where the northd comes from.
pkg=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status} ${Version}' ovn-central 2>/dev/null | awk '/ installed /{print $NF}' || true)
if [ -n "$pkg" ]; then
  oracle="debian ovn-central $pkg"
else
  [ -d "$root/usr/src/ovn/northd" ] || { echo "regen.sh: $root has neither a Debian ovn-central nor a source tree in /usr/src/ovn" >&2; exit 1; }
  : "${OVN_GIT_DIR:?OVN_GIT_DIR: the fetched ovn-org/ovn git dir, to record the commit of a source build}"
  : "${OVS_GIT_DIR:?OVS_GIT_DIR: the fetched openvswitch/ovs git dir}"
  tag=v$version
  commit=$(git -C "$OVN_GIT_DIR" rev-parse "$tag^{commit}")
  ovs=$(git -C "$OVN_GIT_DIR" ls-tree "$tag" ovs | awk '$2 == "commit" {print $3}')
  git -C "$OVN_GIT_DIR" show "$tag:northd/northd.c" | cmp -s - "$root/usr/src/ovn/northd/northd.c" ||
    { echo "regen.sh: $root/usr/src/ovn is not $tag (northd/northd.c differs)" >&2; exit 1; }
  git -C "$OVS_GIT_DIR" show "$ovs:ovsdb/execution.c" | cmp -s - "$root/usr/src/ovn/ovs/ovsdb/execution.c" ||
    { echo "regen.sh: $root/usr/src/ovn/ovs is not ovs $ovs" >&2; exit 1; }
  oracle="source $tag $commit ovs $ovs"
fi
echo "regen.sh: OVN $version from $root ($oracle)"

go build -o "$work/fixturetxn" ./internal/cmd/fixturetxn
schema=$root/usr/share/ovn/ovn-nb.ovsschema

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
nbctl() { "${c[@]}" ovn-nbctl --db=unix:"$inner/nb.sock" "$@"; }
sbctl() { "${c[@]}" ovn-sbctl --db=unix:"$inner/sb.sock" "$@"; }
# transact FILE: apply a request with the version's ovsdb-client; prints
# the first error of the reply, if any.
transact() {
  cp "$1" "$rundir/txn.json"
  "${c[@]}" ovsdb-client transact unix:"$inner/nb.sock" "$(cat "$rundir/txn.json")" > "$work/reply.json" 2>&1 || true
  grep -o '"error":"[^"]*"\(,"details":"[^"]*"\)\?' "$work/reply.json" | head -1 || true
}
nbctl init
"$work/fixturetxn" -schema "$schema" -empty > "$work/empty.json"

out=testdata/golden/$version
mkdir -p "$out"
fixtures=("$@")
if [ ${#fixtures[@]} -eq 0 ]; then
  fixtures=(testdata/fixtures/*.yaml)
elif [ -f "$out/ORACLE" ] && [ "$(cat "$out/ORACLE")" != "$(printf 'ovn-northd %s\n%s' "$version" "$oracle")" ]; then
  # ORACLE is written below: the northd's version, then where it came from.
  echo "regen.sh: $out was made by $(tail -n +2 "$out/ORACLE"), not $oracle: regenerate all fixtures, not some" >&2; exit 1
fi
for fx in "${fixtures[@]}"; do
  fname=$(basename "$fx" .yaml)
  # Empty the NB first (fixtures reuse UUIDs, and one transaction cannot
  # delete and re-insert the same UUID) and let northd catch up (26.03.1
  # aborts when one of its runs sees a switch deleted and re-inserted with
  # the same UUID), then write the fixture.
  err=$(transact "$work/empty.json")
  [ -z "$err" ] || { echo "regen.sh: emptying the NB: $err" >&2; exit 1; }
  nbctl --timeout=60 --wait=sb sync
  "$work/fixturetxn" -schema "$schema" "$fx" > "$work/fixture.json"
  err=$(transact "$work/fixture.json")
  if [ -n "$err" ]; then
    # A fixture that uses what this version's schema lacks (a tier on
    # 23.03) cannot be expressed in its NB: no golden for this version.
    if grep -qE 'unknown column|constraint violation|syntax error|unknown table' <<<"$err"; then
      rm -f "$out/$fname.lflows"
      echo "regen.sh: $version/$fname: not expressible in OVN $version ($err)"
      continue
    fi
    echo "regen.sh: $fname: $err" >&2
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
    awk -v re="^  table=[0-9]+ *\\\\(($STAGES) *\\\\)," '
      /^Datapath: / { hdr = $0; next }
      $0 ~ re { if (hdr != "") { print hdr; hdr = "" } print }' |
    { if [ ${#sedargs[@]} -gt 0 ]; then sed "${sedargs[@]}"; else cat; fi; } > "$out/$fname.lflows.tmp"
  mv "$out/$fname.lflows.tmp" "$out/$fname.lflows"
  echo "regen.sh: $version/$fname: $(grep -c '^  table=' "$out/$fname.lflows") flows"
done
printf 'ovn-northd %s\n%s\n' "$version" "$oracle" > "$out/ORACLE"
