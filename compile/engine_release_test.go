package compile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// The mutator's changes of the NB inputs that releases after 23.03 add:
// tiers, pass, samples and their collectors and apps, persist-established,
// network functions, enable-stateless-acl-with-lb, acl_ct_translation.

// pickRef returns the UUID of a random row of mp, a dangling UUID, or nil.
func pickRef[T any](m *mutator, table string, mp map[string]T) *string {
	switch m.r.IntN(5) {
	case 0:
		return nil
	case 1:
		id := nbschema.DerivedUUID(table, "dangling")
		return &id
	}
	id, _, ok := pick(m.r, mp)
	if !ok {
		return nil
	}
	return &id
}

// mutateACLRelease changes a column or option of a that a later release
// reads (a tier change when the release has none of them).
func (m *mutator) mutateACLRelease(a *nbdb.ACL) {
	r, s := m.r, m.s
	switch r.IntN(6) {
	case 0:
		if m.has(release.ACLPass) {
			a.Action = "pass"
			return
		}
	case 1:
		if m.has(release.ACLSample) {
			if r.IntN(2) == 0 {
				a.SampleNew = pickRef(m, nbdb.SampleTable, s.Samples)
			} else {
				a.SampleEst = pickRef(m, nbdb.SampleTable, s.Samples)
			}
			return
		}
	case 2:
		if m.has(release.PersistEstablished) {
			opts := map[string]string{}
			for k, v := range a.Options {
				opts[k] = v
			}
			if opts["persist-established"] == "true" {
				delete(opts, "persist-established")
			} else {
				opts["persist-established"] = "true"
				if r.IntN(2) == 0 {
					a.Action = "allow-related"
				}
			}
			a.Options = opts
			return
		}
	case 3:
		if m.has(release.NetworkFunction) {
			a.NetworkFunctionGroup = pickRef(m, nbdb.NetworkFunctionGroupTable, s.NetworkFunctionGroups)
			if r.IntN(2) == 0 {
				a.Action = "allow-related"
			}
			return
		}
	}
	a.Tier = r.IntN(4)
}

// stepRelease makes one change of a row or option only later releases
// read (an ACL tier change when the release has none of them).
func (m *mutator) stepRelease() {
	r, s := m.r, m.s
	switch r.IntN(9) {
	case 0: // Sample
		if !m.has(release.ACLSample) {
			break
		}
		id, smp, ok := pick(r, s.Samples)
		switch {
		case !ok || r.IntN(3) == 0:
			smp = &nbdb.Sample{UUID: m.id(nbdb.SampleTable), Metadata: 1 + r.IntN(4)}
			id = smp.UUID
			s.Samples[id] = smp
		case r.IntN(4) == 0:
			delete(s.Samples, id)
			m.touch(nbdb.SampleTable, id)
			return
		default:
			smp.Metadata = 1 + r.IntN(4)
		}
		smp.Collectors = nil
		for cid := range s.SampleCollectors {
			if r.IntN(2) == 0 {
				smp.Collectors = append(smp.Collectors, cid)
			}
		}
		nbschema.TableByName(nbdb.SampleTable).SortSets(smp)
		m.touch(nbdb.SampleTable, id)
		return
	case 1: // Sample_Collector
		if !m.has(release.ACLSample) {
			break
		}
		id, c, ok := pick(r, s.SampleCollectors)
		if !ok || r.IntN(3) == 0 {
			c = &nbdb.SampleCollector{UUID: m.id(nbdb.SampleCollectorTable), Name: "c"}
			id = c.UUID
			s.SampleCollectors[id] = c
		} else if r.IntN(5) == 0 {
			delete(s.SampleCollectors, id)
			m.touch(nbdb.SampleCollectorTable, id)
			return
		}
		c.ID, c.SetID, c.Probability = 1+r.IntN(3), []int{1, 2, 300}[r.IntN(3)], []int{65535, 100}[r.IntN(2)]
		m.touch(nbdb.SampleCollectorTable, id)
		return
	case 2: // Sampling_App
		if !m.has(release.ACLSample) {
			break
		}
		id, app, ok := pick(r, s.SamplingApps)
		if !ok || r.IntN(3) == 0 {
			app = &nbdb.SamplingApp{UUID: m.id(nbdb.SamplingAppTable)}
			id = app.UUID
			s.SamplingApps[id] = app
		} else if r.IntN(4) == 0 {
			delete(s.SamplingApps, id)
			m.touch(nbdb.SamplingAppTable, id)
			return
		}
		app.Type = []string{nbdb.SamplingAppTypeACLNew, nbdb.SamplingAppTypeACLEst, nbdb.SamplingAppTypeDrop}[r.IntN(3)]
		app.ID = 1 + r.IntN(3)
		m.touch(nbdb.SamplingAppTable, id)
		return
	case 3: // Network_Function_Group
		if !m.has(release.NetworkFunction) {
			break
		}
		id, g, ok := pick(r, s.NetworkFunctionGroups)
		if !ok || r.IntN(3) == 0 {
			g = &nbdb.NetworkFunctionGroup{UUID: m.id(nbdb.NetworkFunctionGroupTable), Name: "nfg", Mode: nbdb.NetworkFunctionGroupModeInline}
			id = g.UUID
			s.NetworkFunctionGroups[id] = g
		}
		g.ID = 1 + r.IntN(3)
		g.Mode = nbdb.NetworkFunctionGroupModeInline
		if m.has(release.NFVtap) && r.IntN(2) == 0 {
			g.Mode = nbdb.NetworkFunctionGroupModeVtap
		}
		g.Fallback = nil
		if r.IntN(2) == 0 {
			f := []string{nbdb.NetworkFunctionGroupFallbackFailOpen, nbdb.NetworkFunctionGroupFallbackFailClose}[r.IntN(2)]
			g.Fallback = &f
		}
		g.NetworkFunction = nil
		for nf := range s.NetworkFunctions {
			if r.IntN(2) == 0 {
				g.NetworkFunction = append(g.NetworkFunction, nf)
			}
		}
		nbschema.TableByName(nbdb.NetworkFunctionGroupTable).SortSets(g)
		g.NetworkFunctionActive = pickRef(m, nbdb.NetworkFunctionTable, s.NetworkFunctions)
		m.touch(nbdb.NetworkFunctionGroupTable, id)
		return
	case 4: // Network_Function and its health check
		if !m.has(release.NetworkFunction) {
			break
		}
		id, nf, ok := pick(r, s.NetworkFunctions)
		if !ok || r.IntN(3) == 0 {
			nf = &nbdb.NetworkFunction{UUID: m.id(nbdb.NetworkFunctionTable), Name: "nf"}
			id = nf.UUID
			s.NetworkFunctions[id] = nf
		} else if r.IntN(5) == 0 {
			delete(s.NetworkFunctions, id)
			m.touch(nbdb.NetworkFunctionTable, id)
			return
		}
		nf.ID = 1 + r.IntN(3)
		if p := pickRef(m, nbdb.LogicalSwitchPortTable, s.Ports); p != nil {
			nf.Inport = *p
		}
		if p := pickRef(m, nbdb.LogicalSwitchPortTable, s.Ports); p != nil {
			o := *p
			nf.Outport = &o
		}
		if m.has(release.NFVtap) && r.IntN(3) == 0 {
			nf.Outport = nil // optional from 26.09 (a vtap function has none)
		}
		nf.HealthCheck = nil
		if r.IntN(4) == 0 {
			hc := &nbdb.NetworkFunctionHealthCheck{UUID: m.id(nbdb.NetworkFunctionHealthCheckTable), Name: "hc"}
			s.NetworkFunctionHealths[hc.UUID] = hc
			m.touch(nbdb.NetworkFunctionHealthCheckTable, hc.UUID)
			nf.HealthCheck = &hc.UUID
		}
		m.touch(nbdb.NetworkFunctionTable, id)
		return
	case 5: // switch options of later releases
		id, ls, ok := pick(r, s.Switches)
		if !ok {
			return
		}
		oc := map[string]string{}
		for k, v := range ls.OtherConfig {
			oc[k] = v
		}
		if m.has(release.StatelessACLWithLB) && r.IntN(2) == 0 {
			if oc["enable-stateless-acl-with-lb"] == "true" {
				delete(oc, "enable-stateless-acl-with-lb")
			} else {
				oc["enable-stateless-acl-with-lb"] = "true"
			}
		} else if m.rel != nil && m.rel.Version.Compare(release.MustVersion("26.03.1")) >= 0 {
			oc["dynamic-routing-vni"] = []string{"", "100", "nope"}[r.IntN(3)]
		}
		ls.OtherConfig = oc
		m.touch(nbdb.LogicalSwitchTable, id)
		return
	case 6: // NB_Global options of later releases
		if !m.has(release.ACLCtTranslation) {
			break
		}
		if s.Global == nil {
			s.Global = &nbdb.NBGlobal{UUID: m.id(nbdb.NBGlobalTable), Options: map[string]string{}}
		}
		opts := map[string]string{}
		for k, v := range s.Global.Options {
			opts[k] = v
		}
		opts["acl_ct_translation"] = fmt.Sprint(r.IntN(2) == 0)
		s.Global.Options = opts
		m.touch(nbdb.NBGlobalTable, s.Global.UUID)
		return
	case 7: // Mirror, a port's mirror_rules
		if !m.has(release.LportMirror) {
			break
		}
		if pid, p, ok := pick(r, s.Ports); ok && r.IntN(2) == 0 {
			var rules []string
			for id := range s.Mirrors {
				if r.IntN(2) == 0 {
					rules = append(rules, id)
				}
			}
			slices.Sort(rules)
			p.MirrorRules = rules
			m.touch(nbdb.LogicalSwitchPortTable, pid)
			return
		}
		id, mr, ok := pick(r, s.Mirrors)
		if !ok || r.IntN(3) == 0 {
			mr = &nbdb.Mirror{UUID: m.id(nbdb.MirrorTable), Name: "m", Filter: nbdb.MirrorFilterBoth}
			id = mr.UUID
			s.Mirrors[id] = mr
		} else if r.IntN(5) == 0 {
			delete(s.Mirrors, id)
			m.touch(nbdb.MirrorTable, id)
			return
		}
		mr.Type = []string{nbdb.MirrorTypeLport, nbdb.MirrorTypeLport, nbdb.MirrorTypeGre}[r.IntN(3)]
		mr.Filter = []string{nbdb.MirrorFilterFromLport, nbdb.MirrorFilterToLport, nbdb.MirrorFilterBoth}[r.IntN(3)]
		mr.Sink = "nope" // a sink that names no port: no serving port
		if _, p, ok := pick(r, s.Ports); ok && r.IntN(4) > 0 {
			mr.Sink = p.Name
		}
		m.touch(nbdb.MirrorTable, id)
		return
	}
	// A tier change of an existing ACL (the first tier != 0 of a switch
	// flips its tier loops on).
	if id, a, ok := pick(r, s.ACLs); ok {
		if m.has(release.ACLTier) {
			a.Tier = r.IntN(4)
		} else {
			m.mutateACL(a)
		}
		m.touch(nbdb.ACLTable, id)
	}
}

// seedRelease adds to a generated NB the rows of rel's later features, so
// that ACL mutations have samples and network function groups to name.
func seedRelease(s *nbschema.Snapshot, rel *release.Release) {
	if rel == nil {
		return
	}
	if rel.Has(release.ACLSample) {
		for i := range 2 {
			c := &nbdb.SampleCollector{UUID: nbschema.DerivedUUID(nbdb.SampleCollectorTable, fmt.Sprint(i)), ID: i + 1, SetID: 1 + 299*i, Probability: 65535, Name: "c"}
			s.SampleCollectors[c.UUID] = c
			smp := &nbdb.Sample{UUID: nbschema.DerivedUUID(nbdb.SampleTable, fmt.Sprint(i)), Metadata: 10 + i, Collectors: []string{c.UUID}}
			s.Samples[smp.UUID] = smp
		}
		for i, typ := range []string{nbdb.SamplingAppTypeACLNew, nbdb.SamplingAppTypeACLEst} {
			app := &nbdb.SamplingApp{UUID: nbschema.DerivedUUID(nbdb.SamplingAppTable, typ), Type: typ, ID: 2 + i}
			s.SamplingApps[app.UUID] = app
		}
		// Half the ACLs sample through the two samples, so that ACLs of
		// one switch share generic sample flows.
		samples := nbschema.SortedKeys(s.Samples)
		for i, id := range nbschema.SortedKeys(s.ACLs) {
			if i%2 == 0 {
				s.ACLs[id].SampleNew = &samples[i/2%2]
			}
			if i%3 == 0 {
				s.ACLs[id].SampleEst = &samples[i/3%2]
			}
		}
	}
	if rel.Has(release.NetworkFunction) {
		ports := nbschema.SortedKeys(s.Ports)
		var nfs []string
		for i := range 2 {
			nf := &nbdb.NetworkFunction{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionTable, fmt.Sprint(i)), Name: "nf", ID: i + 1,
				Inport: ports[2*i], Outport: &ports[2*i+1]}
			s.NetworkFunctions[nf.UUID] = nf
			nfs = append(nfs, nf.UUID)
		}
		g := &nbdb.NetworkFunctionGroup{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionGroupTable, "0"), Name: "nfg", ID: 1,
			Mode: nbdb.NetworkFunctionGroupModeInline, NetworkFunction: nfs}
		s.NetworkFunctionGroups[g.UUID] = g
	}
}

// checkACLIDs fails unless ids gives every allow-related ACL with
// options:persist-established of s, and only those, a distinct id in
// 1..65535 (on releases with persist-established; none before).
func checkACLIDs(t *testing.T, s *nbschema.Snapshot, rel *release.Release, ids map[string]int) {
	t.Helper()
	if rel == nil || !rel.Has(release.PersistEstablished) {
		if ids != nil {
			t.Fatalf("ACL ids on a release without persist-established: %v", ids)
		}
		return
	}
	seen := map[int]string{}
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		a := s.ACLs[id]
		n, ok := ids[id]
		persists := a.Action == "allow-related" && a.Options["persist-established"] == "true"
		switch {
		case persists && !ok:
			t.Fatalf("persist-established ACL %s has no id", id)
		case !persists && ok:
			t.Fatalf("ACL %s has id %d and does not persist", id, n)
		case ok && (n < 1 || n > 65535):
			t.Fatalf("ACL %s has id %d", id, n)
		case ok && seen[n] != "":
			t.Fatalf("ACLs %s and %s share id %d", seen[n], id, n)
		}
		if ok {
			seen[n] = id
		}
	}
	if len(ids) != len(seen) {
		t.Fatalf("%d ids for %d persist-established ACLs", len(ids), len(seen))
	}
}

// TestEngineFeatureFlips applies, one batch each, the NB changes that
// switch a later release's feature on for a switch and back — the first
// tier ≠ 0 ACL, the first persist-established ACL, a sample and its
// collector, a sampling app, a network function group — and checks that
// each delta gives a full compile's flows and that the flows the feature
// adds appear.
func TestEngineFeatureFlips(t *testing.T) {
	for _, rel := range []*release.Release{release.MustLookup("25.03.0"), release.MustLookup("26.03.1")} {
		t.Run(rel.Series(), func(t *testing.T) {
			truth := baseNB(7)
			truth.Release = rel
			opts := compile.Options{Release: rel}
			e := compile.NewEngineWith(cloneSnapshot(truth), opts)
			prev := e.Listing()
			pgID := nbschema.SortedKeys(truth.PortGroups)[0]
			aclID := truth.PortGroups[pgID].ACLs[0]
			step := func(name, want string, edit func(m *mutator)) {
				t.Helper()
				m := &mutator{s: truth, rel: rel, changed: map[[2]string]bool{}}
				edit(m)
				var changes []compile.RowChange
				for k := range m.changed {
					var row model.Model
					if r, ok := nbschema.TableByName(k[0]).Row(truth, k[1]); ok {
						row = model.Clone(r)
					}
					changes = append(changes, compile.RowChange{Table: k[0], UUID: k[1], Row: row})
				}
				d := e.Apply(changes)
				next := d.Apply(prev)
				o := opts
				o.ACLIDs = e.ACLIDs()
				checkACLIDs(t, truth, rel, o.ACLIDs)
				if got, exp := text(t, next), text(t, compile.CompileWith(cloneSnapshot(truth), o).Flows); got != exp {
					t.Fatalf("%s: previous flows + delta differ from a full compile", name)
				}
				if want != "" && !strings.Contains(text(t, next), want) {
					t.Fatalf("%s: no flow has %q", name, want)
				}
				prev = next
			}
			acl := func(m *mutator, f func(a *nbdb.ACL)) {
				f(truth.ACLs[aclID])
				m.touch(nbdb.ACLTable, aclID)
			}
			step("first tier", "reg8[30..31] = 1; next(pipeline=", func(m *mutator) { acl(m, func(a *nbdb.ACL) { a.Tier = 2 }) })
			step("pass", "", func(m *mutator) { acl(m, func(a *nbdb.ACL) { a.Action = "pass" }) })
			step("no tier", "", func(m *mutator) { acl(m, func(a *nbdb.ACL) { a.Tier = 0 }) })
			step("first persist-established", "reg2[16..31] = 1; reg0[20] = 1;", func(m *mutator) {
				acl(m, func(a *nbdb.ACL) {
					a.Action, a.Options = "allow-related", map[string]string{"persist-established": "true"}
				})
			})
			c := &nbdb.SampleCollector{UUID: nbschema.DerivedUUID(nbdb.SampleCollectorTable, "flip"), ID: 5, SetID: 9, Probability: 65535}
			smp := &nbdb.Sample{UUID: nbschema.DerivedUUID(nbdb.SampleTable, "flip"), Metadata: 77, Collectors: []string{c.UUID}}
			step("sample", "reg8[0..7] == 5", func(m *mutator) {
				truth.SampleCollectors[c.UUID], truth.Samples[smp.UUID] = c, smp
				m.touch(nbdb.SampleCollectorTable, c.UUID)
				m.touch(nbdb.SampleTable, smp.UUID)
				acl(m, func(a *nbdb.ACL) { a.SampleNew = &smp.UUID })
			})
			step("sampling app", "obs_domain=3,", func(m *mutator) {
				app := &nbdb.SamplingApp{UUID: nbschema.DerivedUUID(nbdb.SamplingAppTable, "flip"), Type: nbdb.SamplingAppTypeACLNew, ID: 3}
				truth.SamplingApps[app.UUID] = app
				m.touch(nbdb.SamplingAppTable, app.UUID)
			})
			step("collector", "collector_set=10,", func(m *mutator) {
				c.SetID = 10
				m.touch(nbdb.SampleCollectorTable, c.UUID)
			})
			step("no persist-established", "", func(m *mutator) { acl(m, func(a *nbdb.ACL) { a.Options = nil }) })
			if !rel.Has(release.NetworkFunction) {
				return
			}
			ports := nbschema.SortedKeys(truth.Ports)
			nf := &nbdb.NetworkFunction{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionTable, "flip"), Name: "nf", ID: 4, Inport: ports[0], Outport: &ports[1]}
			nfg := &nbdb.NetworkFunctionGroup{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionGroupTable, "flip"), Name: "g", ID: 6,
				Mode: nbdb.NetworkFunctionGroupModeInline, NetworkFunction: []string{nf.UUID}}
			step("network function group", "reg0[22..29] = 6;", func(m *mutator) {
				truth.NetworkFunctions[nf.UUID], truth.NetworkFunctionGroups[nfg.UUID] = nf, nfg
				m.touch(nbdb.NetworkFunctionTable, nf.UUID)
				m.touch(nbdb.NetworkFunctionGroupTable, nfg.UUID)
				acl(m, func(a *nbdb.ACL) { a.NetworkFunctionGroup = &nfg.UUID })
			})
			step("network function port renamed", "", func(m *mutator) {
				truth.Ports[ports[0]].Name = "renamed"
				m.touch(nbdb.LogicalSwitchPortTable, ports[0])
			})
			step("network function id", "", func(m *mutator) {
				nf.ID = 8
				m.touch(nbdb.NetworkFunctionTable, nf.UUID)
			})
		})
	}
}

// TestEngineNFVtapFlips is TestEngineFeatureFlips for 26.09's network
// functions with their ports bound (compile.Options.SB): an inline
// function's learn and lookup flows, then vtap mode — refused while the
// function has an outport, mirrored once it has none — and back; each
// delta gives a full compile's flows.
func TestEngineNFVtapFlips(t *testing.T) {
	rel := release.MustLookup("26.09.0")
	truth := baseNB(7)
	truth.Release = rel
	pgID := nbschema.SortedKeys(truth.PortGroups)[0]
	pg := truth.PortGroups[pgID]
	aclID := pg.ACLs[0]
	// The function's ports: two ports of the switch of the group's first
	// port, where the group's ACLs apply.
	var ports []string
	for _, id := range nbschema.SortedKeys(truth.Switches) {
		if ls := truth.Switches[id]; len(pg.Ports) > 0 && len(ls.Ports) >= 2 && slices.Contains(ls.Ports, pg.Ports[0]) {
			ports = ls.Ports
		}
	}
	if len(ports) < 2 {
		t.Fatal("no switch with two ports for the port group")
	}
	sb := &compile.SBState{Ports: map[string]compile.PortBinding{}}
	for _, p := range truth.Ports {
		sb.Ports[p.Name] = compile.PortBinding{Chassis: "ch1", Up: true}
	}
	opts := compile.Options{Release: rel, SB: sb}
	e := compile.NewEngineWith(cloneSnapshot(truth), opts)
	prev := e.Listing()
	step := func(name, want, absent string, edit func()) {
		t.Helper()
		m := &mutator{s: truth, rel: rel, changed: map[[2]string]bool{}}
		edit()
		m.touch(nbdb.NetworkFunctionTable, nbschema.DerivedUUID(nbdb.NetworkFunctionTable, "vtap"))
		m.touch(nbdb.NetworkFunctionGroupTable, nbschema.DerivedUUID(nbdb.NetworkFunctionGroupTable, "vtap"))
		m.touch(nbdb.ACLTable, aclID)
		var changes []compile.RowChange
		for k := range m.changed {
			var row model.Model
			if r, ok := nbschema.TableByName(k[0]).Row(truth, k[1]); ok {
				row = model.Clone(r)
			}
			changes = append(changes, compile.RowChange{Table: k[0], UUID: k[1], Row: row})
		}
		next := e.Apply(changes).Apply(prev)
		got := text(t, next)
		o := opts
		o.ACLIDs = e.ACLIDs()
		if exp := text(t, compile.CompileWith(cloneSnapshot(truth), o).Flows); got != exp {
			t.Fatalf("%s: previous flows + delta differ from a full compile", name)
		}
		if want != "" && !strings.Contains(got, want) {
			t.Fatalf("%s: no flow has %q", name, want)
		}
		if absent != "" && strings.Contains(got, absent) {
			t.Fatalf("%s: a flow has %q", name, absent)
		}
		prev = next
	}
	out := ports[1]
	nf := &nbdb.NetworkFunction{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionTable, "vtap"), Name: "nf", ID: 9, Inport: ports[0], Outport: &out}
	nfg := &nbdb.NetworkFunctionGroup{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionGroupTable, "vtap"), Name: "g", ID: 6,
		Mode: nbdb.NetworkFunctionGroupModeInline, NetworkFunction: []string{nf.UUID}}
	step("inline, bound", "nf_learn_orig_inport(ipv6 = false); outport = ", "clone {", func() {
		truth.NetworkFunctions[nf.UUID], truth.NetworkFunctionGroups[nfg.UUID] = nf, nfg
		truth.ACLs[aclID].Action = "allow-related"
		truth.ACLs[aclID].NetworkFunctionGroup = &nfg.UUID
	})
	step("vtap with an outport", "reg0[22..29] == 6), action=(reg8[21] = 0;", "nf_lookup_orig_inport", func() { nfg.Mode = nbdb.NetworkFunctionGroupModeVtap })
	step("vtap", "clone {outport = ", "nf_learn_orig_inport", func() { nf.Outport = nil })
	step("inline without outport", "nf_learn_orig_inport(ipv6 = true); next;", "clone {", func() { nfg.Mode = nbdb.NetworkFunctionGroupModeInline })
	step("inline again", "reg8[24] = nf_lookup_orig_inport(); next;", "clone {", func() { nf.Outport = &out })
}
