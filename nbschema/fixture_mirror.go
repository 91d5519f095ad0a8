package nbschema

import (
	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// The fixture section of port mirrors: `mirrors`, each named, and a
// switch port's `mirror_rules` naming them. A mirror of type "lport"
// (25.09+, release.LportMirror) sends copies to another switch port, its
// sink; gre, erspan and local mirrors leave OVN through a tunnel or an
// OVS port and touch no logical flow aclc compiles.

var (
	mirrorTypes   = []string{nbdb.MirrorTypeGre, nbdb.MirrorTypeErspan, nbdb.MirrorTypeLocal, nbdb.MirrorTypeLport}
	mirrorFilters = []string{nbdb.MirrorFilterFromLport, nbdb.MirrorFilterToLport, nbdb.MirrorFilterBoth}
)

func (b *builder) mirror(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "type", "sink", "filter", "index", "external_ids")
	if !ok {
		return
	}
	name := b.required(f, "name")
	m := &nbdb.Mirror{UUID: b.rowUUID(f, nbdb.MirrorTable, name), Name: name, Sink: b.required(f, "sink"),
		ExternalIDs: b.strMap(f, "external_ids")}
	if t := b.enum(f, "type", true, mirrorTypes, ""); t != nil {
		m.Type = *t
		if m.Type == nbdb.MirrorTypeLport {
			b.needs(release.LportMirror, f.at("type"), join(path, "type"))
		}
	}
	if v := b.enum(f, "filter", true, mirrorFilters, ""); v != nil {
		m.Filter = *v
	}
	m.Index, _ = b.integer(f, "index", 0, 4294967295)
	b.addName(nbdb.MirrorTable, name, m.UUID, f.at("name"), join(path, "name"))
	b.snap.Mirrors[m.UUID] = m
}

func (e *encoder) mirrors() []*yaml.Node {
	var out []*yaml.Node
	for _, id := range byName(e.snap.Mirrors, func(r *nbdb.Mirror) string { return r.Name }) {
		r := e.snap.Mirrors[id]
		m := rowNode(r.UUID)
		putStr(m, "name", r.Name)
		put(m, "type", strNode(r.Type))
		put(m, "sink", strNode(r.Sink))
		put(m, "filter", strNode(r.Filter))
		putInt(m, "index", r.Index, false)
		putMap(m, "external_ids", r.ExternalIDs)
		out = append(out, m)
	}
	return out
}

// putMirrorRules writes a port's mirror_rules by mirror name.
func (e *encoder) putMirrorRules(m *yaml.Node, p *nbdb.LogicalSwitchPort) {
	if len(p.MirrorRules) == 0 {
		return
	}
	name, counts := nameOf(e.snap.Mirrors, func(r *nbdb.Mirror) string { return r.Name })
	putList(m, "mirror_rules", e.refs("switch port "+p.Name, p.MirrorRules, name, counts), true)
}
