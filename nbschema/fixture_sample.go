package nbschema

import (
	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// The fixture sections of ACL sampling (24.09+: sample_collectors,
// sampling_apps, samples) and network functions (26.03+:
// network_function_health_checks, network_functions,
// network_function_groups). A sample has no name column: its `name` is a
// fixture-only handle, as for dhcp_options.

func (b *builder) sampleCollector(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "id", "probability", "set_id", "external_ids")
	if !ok {
		return
	}
	b.needs(release.ACLSample, n, path)
	name := b.required(f, "name")
	c := &nbdb.SampleCollector{UUID: b.rowUUID(f, nbdb.SampleCollectorTable, name), Name: name, ExternalIDs: b.strMap(f, "external_ids")}
	c.ID = b.requiredInt(f, "id", 1, 255)
	c.Probability, _ = b.integer(f, "probability", 0, 65535)
	c.SetID = b.requiredInt(f, "set_id", 1, 4294967295)
	b.addName(nbdb.SampleCollectorTable, name, c.UUID, f.at("name"), join(path, "name"))
	b.snap.SampleCollectors[c.UUID] = c
}

var samplingAppTypes = []string{nbdb.SamplingAppTypeDrop, nbdb.SamplingAppTypeACLNew, nbdb.SamplingAppTypeACLEst}

func (b *builder) samplingApp(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "type", "id", "external_ids")
	if !ok {
		return
	}
	b.needs(release.ACLSample, n, path)
	a := &nbdb.SamplingApp{ExternalIDs: b.strMap(f, "external_ids")}
	if t := b.enum(f, "type", true, samplingAppTypes, ""); t != nil {
		a.Type = *t
	}
	a.UUID = b.rowUUID(f, nbdb.SamplingAppTable, keyOr(a.Type, pos))
	a.ID = b.requiredInt(f, "id", 1, 255)
	b.snap.SamplingApps[a.UUID] = a
}

func (b *builder) sample(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "name", "metadata", "collectors")
	if !ok {
		return
	}
	b.needs(release.ACLSample, n, path)
	name := b.str(f, "name")
	s := &nbdb.Sample{UUID: b.rowUUID(f, nbdb.SampleTable, keyOr(name, pos))}
	s.Metadata = b.requiredInt(f, "metadata", 1, 4294967295)
	if name != "" {
		b.addName(nbdb.SampleTable, name, s.UUID, f.at("name"), join(path, "name"))
	}
	b.refList(f, "collectors", nbdb.SampleCollectorTable, func(u string) { s.Collectors = append(s.Collectors, u) })
	b.snap.Samples[s.UUID] = s
}

func (b *builder) nfHealthCheck(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "options", "external_ids")
	if !ok {
		return
	}
	b.needs(release.NetworkFunction, n, path)
	name := b.required(f, "name")
	h := &nbdb.NetworkFunctionHealthCheck{UUID: b.rowUUID(f, nbdb.NetworkFunctionHealthCheckTable, name), Name: name,
		Options: b.strMap(f, "options"), ExternalIDs: b.strMap(f, "external_ids")}
	b.addName(nbdb.NetworkFunctionHealthCheckTable, name, h.UUID, f.at("name"), join(path, "name"))
	b.snap.NetworkFunctionHealths[h.UUID] = h
}

func (b *builder) networkFunction(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "id", "inport", "outport", "health_check", "external_ids")
	if !ok {
		return
	}
	b.needs(release.NetworkFunction, n, path)
	name := b.required(f, "name")
	nf := &nbdb.NetworkFunction{UUID: b.rowUUID(f, nbdb.NetworkFunctionTable, name), Name: name, ExternalIDs: b.strMap(f, "external_ids")}
	nf.ID = b.requiredInt(f, "id", 1, 255)
	if !f.has("inport") {
		b.errorf(f.node, join(path, "inport"), "missing (required; a switch port name)")
	}
	if !f.has("outport") {
		// Optional from NB schema 7.19.0 (26.09: a vtap-mode function has
		// none); required before.
		b.needs(release.NFVtap, n, join(path, "outport"))
	}
	b.refOne(f, "inport", nbdb.LogicalSwitchPortTable, func(u string) { nf.Inport = u })
	b.refOne(f, "outport", nbdb.LogicalSwitchPortTable, func(u string) { nf.Outport = &u })
	b.refOne(f, "health_check", nbdb.NetworkFunctionHealthCheckTable, func(u string) { nf.HealthCheck = &u })
	b.addName(nbdb.NetworkFunctionTable, name, nf.UUID, f.at("name"), join(path, "name"))
	b.snap.NetworkFunctions[nf.UUID] = nf
}

var nfgFallbacks = []string{nbdb.NetworkFunctionGroupFallbackFailOpen, nbdb.NetworkFunctionGroupFallbackFailClose}

func (b *builder) networkFunctionGroup(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "id", "mode", "fallback", "network_functions", "active", "external_ids")
	if !ok {
		return
	}
	b.needs(release.NetworkFunction, n, path)
	name := b.required(f, "name")
	g := &nbdb.NetworkFunctionGroup{UUID: b.rowUUID(f, nbdb.NetworkFunctionGroupTable, name), Name: name,
		Mode: nbdb.NetworkFunctionGroupModeInline, ExternalIDs: b.strMap(f, "external_ids")}
	g.ID = b.requiredInt(f, "id", 1, 255)
	if m := b.enum(f, "mode", false, []string{nbdb.NetworkFunctionGroupModeInline, nbdb.NetworkFunctionGroupModeVtap}, ""); m != nil {
		g.Mode = *m
		if g.Mode == nbdb.NetworkFunctionGroupModeVtap {
			b.needs(release.NFVtap, f.at("mode"), join(path, "mode"))
		}
	}
	g.Fallback = b.enum(f, "fallback", false, nfgFallbacks, "")
	b.refList(f, "network_functions", nbdb.NetworkFunctionTable, func(u string) { g.NetworkFunction = append(g.NetworkFunction, u) })
	b.refOne(f, "active", nbdb.NetworkFunctionTable, func(u string) { g.NetworkFunctionActive = &u })
	b.addName(nbdb.NetworkFunctionGroupTable, name, g.UUID, f.at("name"), join(path, "name"))
	b.snap.NetworkFunctionGroups[g.UUID] = g
}

// aclRefs decodes an ACL's sample_new, sample_est and
// network_function_group references.
func (b *builder) aclRefs(f fields, a *nbdb.ACL) {
	for _, k := range []string{"sample_new", "sample_est"} {
		if f.has(k) {
			b.needs(release.ACLSample, f.at(k), join(f.path, k))
		}
	}
	b.refOne(f, "sample_new", nbdb.SampleTable, func(u string) { a.SampleNew = &u })
	b.refOne(f, "sample_est", nbdb.SampleTable, func(u string) { a.SampleEst = &u })
	if f.has("network_function_group") {
		b.needs(release.NetworkFunction, f.at("network_function_group"), join(f.path, "network_function_group"))
	}
	b.refOne(f, "network_function_group", nbdb.NetworkFunctionGroupTable, func(u string) { a.NetworkFunctionGroup = &u })
}

// requiredInt is integer for a required key.
func (b *builder) requiredInt(f fields, key string, lo, hi int64) int {
	if !f.has(key) {
		b.errorf(f.node, join(f.path, key), "missing (required; %d..%d)", lo, hi)
		return 0
	}
	v, _ := b.integer(f, key, lo, hi)
	return v
}

// Encoding: rows by name (samples and sampling apps by UUID); references
// by the target's name when it is unique, else by UUID (samples have no
// name column: references to them are UUIDs).

// nameOf returns a name function and the name counts of the rows of one
// table, for encoder.refs.
func nameOf[T any](rows map[string]T, name func(T) string) (func(string) (string, bool), map[string]int) {
	return func(u string) (string, bool) {
		r, ok := rows[u]
		if !ok {
			return "", false
		}
		return name(r), true
	}, countNames(rows, name)
}

// ref is refs for one reference.
func (e *encoder) ref(what, uuid string, name func(string) (string, bool), counts map[string]int) string {
	if r := e.refs(what, []string{uuid}, name, counts); len(r) == 1 {
		return r[0]
	}
	return uuid
}

// putRef writes the optional reference at key by name (see refs).
func (e *encoder) putRef(m *yaml.Node, key, what string, uuid *string, name func(string) (string, bool), counts map[string]int) {
	if uuid != nil {
		put(m, key, strNode(e.ref(what, *uuid, name, counts)))
	}
}

// nfgRef writes an ACL's network_function_group reference.
func (e *encoder) nfgRef(m *yaml.Node, what string, uuid *string) {
	if uuid == nil {
		return
	}
	name := func(u string) (string, bool) {
		r, ok := e.snap.NetworkFunctionGroups[u]
		if !ok {
			return "", false
		}
		return r.Name, true
	}
	e.putRef(m, "network_function_group", what, uuid, name, e.refNames().nfg)
}

func (e *encoder) sampleSections(root *yaml.Node) {
	s := e.snap
	collectorName, collectorCounts := nameOf(s.SampleCollectors, func(r *nbdb.SampleCollector) string { return r.Name })
	portName, portCounts := nameOf(s.Ports, func(r *nbdb.LogicalSwitchPort) string { return r.Name })
	hcName, hcCounts := nameOf(s.NetworkFunctionHealths, func(r *nbdb.NetworkFunctionHealthCheck) string { return r.Name })
	nfName, nfCounts := nameOf(s.NetworkFunctions, func(r *nbdb.NetworkFunction) string { return r.Name })
	var out []*yaml.Node
	for _, id := range byName(s.SampleCollectors, func(r *nbdb.SampleCollector) string { return r.Name }) {
		c := s.SampleCollectors[id]
		m := rowNode(c.UUID)
		putStr(m, "name", c.Name)
		putInt(m, "id", c.ID, true)
		putInt(m, "probability", c.Probability, false)
		putInt(m, "set_id", c.SetID, true)
		putMap(m, "external_ids", c.ExternalIDs)
		out = append(out, m)
	}
	putSeq(root, "sample_collectors", out)
	out = nil
	for _, id := range SortedKeys(s.SamplingApps) {
		a := s.SamplingApps[id]
		m := rowNode(a.UUID)
		put(m, "type", strNode(a.Type))
		putInt(m, "id", a.ID, true)
		putMap(m, "external_ids", a.ExternalIDs)
		out = append(out, m)
	}
	putSeq(root, "sampling_apps", out)
	out = nil
	for _, id := range SortedKeys(s.Samples) {
		x := s.Samples[id]
		m := rowNode(x.UUID)
		putInt(m, "metadata", x.Metadata, true)
		putList(m, "collectors", e.refs("sample "+x.UUID, x.Collectors, collectorName, collectorCounts), true)
		out = append(out, m)
	}
	putSeq(root, "samples", out)
	out = nil
	for _, id := range byName(s.NetworkFunctionHealths, func(r *nbdb.NetworkFunctionHealthCheck) string { return r.Name }) {
		h := s.NetworkFunctionHealths[id]
		m := rowNode(h.UUID)
		putStr(m, "name", h.Name)
		putMap(m, "options", h.Options)
		putMap(m, "external_ids", h.ExternalIDs)
		out = append(out, m)
	}
	putSeq(root, "network_function_health_checks", out)
	out = nil
	for _, id := range byName(s.NetworkFunctions, func(r *nbdb.NetworkFunction) string { return r.Name }) {
		nf := s.NetworkFunctions[id]
		m := rowNode(nf.UUID)
		putStr(m, "name", nf.Name)
		putInt(m, "id", nf.ID, true)
		what := "network function " + nf.Name
		put(m, "inport", strNode(e.ref(what, nf.Inport, portName, portCounts)))
		e.putRef(m, "outport", what, nf.Outport, portName, portCounts) // none only from a 26.09+ NB
		e.putRef(m, "health_check", what, nf.HealthCheck, hcName, hcCounts)
		putMap(m, "external_ids", nf.ExternalIDs)
		out = append(out, m)
	}
	putSeq(root, "network_functions", out)
	out = nil
	for _, id := range byName(s.NetworkFunctionGroups, func(r *nbdb.NetworkFunctionGroup) string { return r.Name }) {
		g := s.NetworkFunctionGroups[id]
		m := rowNode(g.UUID)
		putStr(m, "name", g.Name)
		putInt(m, "id", g.ID, true)
		if g.Mode != nbdb.NetworkFunctionGroupModeInline {
			put(m, "mode", strNode(g.Mode))
		}
		putOptStr(m, "fallback", g.Fallback)
		what := "network function group " + g.Name
		putList(m, "network_functions", e.refs(what, g.NetworkFunction, nfName, nfCounts), true)
		e.putRef(m, "active", what, g.NetworkFunctionActive, nfName, nfCounts)
		putMap(m, "external_ids", g.ExternalIDs)
		out = append(out, m)
	}
	putSeq(root, "network_function_groups", out)
}
