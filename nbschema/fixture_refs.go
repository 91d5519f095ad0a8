package nbschema

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// builder turns a fixture's YAML tree into a Snapshot: rows first, then the
// references between them, which name rows by name (or by UUID).
type builder struct {
	decoder
	snap  *Snapshot
	uuids map[string]string              // uuid -> "table at file:line:col"
	names map[string]map[string][]string // table -> name -> uuids
	where map[string]string              // table+"\x00"+name -> position of first definition
	refs  []ref
	// uses are the release features the fixture uses, checked once the
	// release is known.
	uses []featureUse
}

// featureUse is one use of a release feature in a fixture.
type featureUse struct {
	feature *release.Fact
	node    *yaml.Node
	path    string
}

// ref is a reference to another row by name, resolved once every row is known.
type ref struct {
	node  *yaml.Node
	path  string
	table string
	name  string
	set   func(uuid string)
}

func newBuilder(file string) *builder {
	b := &builder{
		decoder: decoder{file: file},
		snap:    NewSnapshot(),
		uuids:   map[string]string{},
		names:   map[string]map[string][]string{},
		where:   map[string]string{},
	}
	b.snap.Release = nil // settled by the ovn: key and checkFeatures
	return b
}

// rowUUID returns the row's uuid, given or derived from (table, key),
// checks it is unique in the fixture and records the row's Origin.
func (b *builder) rowUUID(f fields, table, key string) string {
	var u string
	derived := !f.has("uuid")
	if derived {
		u = DerivedUUID(table, key)
	} else {
		s, ok := b.scalarString(f.val["uuid"], join(f.path, "uuid"))
		if !ok {
			return DerivedUUID(table, key)
		}
		if !canonicalUUID(s) {
			b.errorf(f.val["uuid"], join(f.path, "uuid"), "%q is not a UUID in lower-case 8-4-4-4-12 form", s)
			return DerivedUUID(table, key)
		}
		u = s
	}
	if prev, dup := b.uuids[u]; dup {
		if t := TableByName(table); derived && key != "" && t != nil && t.UniqueNames {
			// Same table, same name: addName reports the duplicate name.
			return u
		}
		if derived {
			b.errorf(f.node, f.path, "derives the same uuid %s as the %s: give one of them a distinct name or an explicit uuid", u, prev)
		} else {
			b.errorf(f.val["uuid"], join(f.path, "uuid"), "uuid %s already used by the %s", u, prev)
		}
		return u
	}
	b.uuids[u] = fmt.Sprintf("%s row at %s", table, b.pos(f.node))
	b.snap.Origin[u] = b.pos(f.node)
	b.snap.Positions[u] = Position{File: b.file, Line: f.node.Line, Column: f.node.Column}
	return u
}

// addName records that the row uuid of table is called name; tables in
// whose registry entry has UniqueNames reject a second row of the same name.
func (b *builder) addName(table, name, uuid string, n *yaml.Node, path string) {
	if name == "" {
		return
	}
	byName := b.names[table]
	if byName == nil {
		byName = map[string][]string{}
		b.names[table] = byName
	}
	if t := TableByName(table); t != nil && t.UniqueNames && len(byName[name]) > 0 {
		b.errorf(n, path, "duplicate %s name %q (first defined at %s)", tableNoun(table), name, b.where[table+"\x00"+name])
		return
	}
	if len(byName[name]) == 0 {
		b.where[table+"\x00"+name] = b.pos(n)
	}
	byName[name] = append(byName[name], uuid)
}

// refList queues the references in the list at key.
func (b *builder) refList(f fields, key, table string, set func(string)) {
	items := b.list(f, key)
	seen := map[string]int{}
	for i, n := range items {
		p := index(join(f.path, key), i)
		s, ok := b.scalarString(n, p)
		if !ok {
			continue
		}
		if j, dup := seen[s]; dup {
			b.errorf(n, p, "%q already listed at %s[%d]", s, join(f.path, key), j)
			continue
		}
		seen[s] = i
		b.refs = append(b.refs, ref{node: resolve(n), path: p, table: table, name: s, set: set})
	}
}

// refOne queues the single reference at key.
func (b *builder) refOne(f fields, key, table string, set func(string)) {
	if !f.has(key) {
		return
	}
	p := join(f.path, key)
	if s, ok := b.scalarString(f.val[key], p); ok {
		b.refs = append(b.refs, ref{node: resolve(f.val[key]), path: p, table: table, name: s, set: set})
	}
}

// meterName queues a check that a meter called name exists; ACL.meter and
// Copp.meters name meters by name, not by UUID.
func (b *builder) meterName(n *yaml.Node, path, name string) {
	b.refs = append(b.refs, ref{node: resolve(n), path: path, table: nbdb.MeterTable, name: name, set: nil})
}

// resolveRefs resolves every queued reference, by name first and then by
// UUID.
func (b *builder) resolveRefs() {
	for _, r := range b.refs {
		uuids := b.names[r.table][r.name]
		switch {
		case len(uuids) == 1:
			if r.set != nil {
				r.set(uuids[0])
			}
		case len(uuids) > 1:
			b.errorf(r.node, r.path, "%s name %q is ambiguous (%d rows): refer to it by uuid", tableNoun(r.table), r.name, len(uuids))
		case r.set != nil && b.snap.hasRow(r.table, r.name):
			r.set(r.name)
		default:
			b.errorf(r.node, r.path, "no %s named %q%s", tableNoun(r.table), r.name, b.known(r.table))
		}
	}
}

// known lists a few defined names of table for an error message.
func (b *builder) known(table string) string {
	names := map[string]bool{}
	for n := range b.names[table] {
		names[n] = true
	}
	if len(names) == 0 {
		return " (none defined)"
	}
	list := slices.Sorted(maps.Keys(names))
	if len(list) > 8 {
		list = append(list[:8], "...")
	}
	return " (defined: " + strings.Join(list, ", ") + ")"
}

// hasRow reports whether the snapshot holds a row of table with uuid.
func (s *Snapshot) hasRow(table, uuid string) bool {
	t := TableByName(table)
	return t != nil && t.Has(s, uuid)
}

// tableNoun names an NB table the way an operator says it.
func tableNoun(table string) string {
	if t := TableByName(table); t != nil {
		return t.Noun
	}
	return table
}

// validCIDR reports whether s is an IPv4 or IPv6 prefix, as DHCP_Options.cidr.
func validCIDR(s string) bool {
	_, err := netip.ParsePrefix(s)
	return err == nil
}
