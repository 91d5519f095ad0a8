package lint

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/pset"
)

// exactSwitch evaluates the ACLs of one switch of a fixture by brute
// force: acl/expr's Eval of each match on a packet, and the packets
// pset's sets pick as witnesses.
type exactSwitch struct {
	t     *testing.T
	d     *expr.Dialect
	res   expr.MapResolver
	m     *pset.Manager
	cv    *pset.Converter
	exprs map[string]*expr.Expr // by ACL name
	sets  map[string]pset.Set
	prio  map[string]int
}

func newExactSwitch(t *testing.T, s *nbschema.Snapshot, sw string) *exactSwitch {
	t.Helper()
	l, err := newLinter(s)
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	x := &exactSwitch{t: t, d: l.dialect, exprs: map[string]*expr.Expr{}, sets: map[string]pset.Set{}, prio: map[string]int{}}
	for _, ls := range s.Switches {
		if ls.Name != sw {
			continue
		}
		for _, p := range ls.Ports {
			ports = append(ports, s.Ports[p].Name)
		}
		for _, aid := range ls.ACLs {
			a := s.ACLs[aid]
			x.prio[*a.Name] = a.Priority
			e, err := l.dialect.Parse(a.Match, nil)
			if err != nil {
				t.Fatal(err)
			}
			x.exprs[*a.Name] = e
		}
	}
	pm := map[string]bool{}
	for _, p := range ports {
		pm[p] = true
	}
	x.res = expr.MapResolver{Ports: pm}
	sp, err := pset.NewSpace(l.dialect, ports, "")
	if err != nil {
		t.Fatal(err)
	}
	x.m = pset.NewManager(sp)
	x.cv = x.m.Converter(x.res)
	for n, e := range x.exprs {
		if st, err := x.cv.Convert(e.Root); err == nil {
			x.sets[n] = x.m.And(st, x.m.DomainPorts())
		}
	}
	return x
}

// eval reports whether ACL name's match matches the packet, by Eval.
func (x *exactSwitch) eval(name string, mf *expr.Microflow) bool {
	x.t.Helper()
	ok, err := expr.Eval(x.exprs[name], mf, x.res)
	if err != nil {
		x.t.Fatalf("Eval %s on %s: %v", name, mf, err)
	}
	return ok
}

// above returns the ACLs of the switch with a priority above name's.
func (x *exactSwitch) above(name string) []string {
	var out []string
	for n, p := range x.prio {
		if p > x.prio[name] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// witness returns a packet of s, failing when s is empty.
func (x *exactSwitch) witness(s pset.Set, what string) *expr.Microflow {
	x.t.Helper()
	w, ok := x.m.Witness(s)
	if !ok {
		x.t.Fatalf("%s: no packet", what)
	}
	return w.Microflow()
}

// TestExactWitnesses lints shadowed-exact.yaml, whose shadowing and
// overlap questions the cube bounds could not decide (the earlier lint
// said "undecidable" for four ACLs and "cannot decide" for two pairs),
// and checks each answer with packets evaluated by acl/expr's Eval: an ACL
// reported shadowed has, for each ACL listed with it, a packet both match
// that no ACL above the listed one matches, and every packet of it tried
// is matched by a higher ACL; an ACL not reported has a packet no higher
// ACL matches; overlapping ACLs share a packet, those not reported do not
// meet on the other's packets.
func TestExactWitnesses(t *testing.T) {
	s, err := nbschema.LoadFixture(filepath.Join("testdata", "shadowed-exact.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	shadowed := map[string]Finding{}
	overlaps := map[[2]string]Finding{}
	for _, f := range r.Findings {
		switch f.Rule {
		case RuleShadowed:
			shadowed[f.ACLs[0].Name] = f
		case RuleSamePriority:
			overlaps[[2]string{f.ACLs[0].Name, f.ACLs[1].Name}] = f
		}
	}

	sw0 := newExactSwitch(t, s, "sw0")
	// drop-hosts-web: shadowed by both ACLs above it, each deciding some
	// of its packets first.
	f, ok := shadowed["drop-hosts-web"]
	if !ok || f.Severity != Warning || strings.HasPrefix(f.Message, "not exact") {
		t.Fatalf("drop-hosts-web: want a shadowed warning, got %+v", f)
	}
	var by []string
	for _, a := range f.ACLs[1:] {
		by = append(by, a.Name)
		if a.How == "" {
			t.Errorf("drop-hosts-web: %s listed without how it blocks", a.Name)
		}
	}
	if want := []string{"allow-not-gw", "drop-gw-web"}; !slices.Equal(by, want) {
		t.Errorf("drop-hosts-web shadowed by %v, want %v", by, want)
	}
	b := sw0.sets["drop-hosts-web"]
	for _, a := range by {
		part := sw0.m.And(b, sw0.sets[a])
		for _, h := range sw0.above(a) {
			part = sw0.m.Diff(part, sw0.sets[h])
		}
		mf := sw0.witness(part, "drop-hosts-web ∩ "+a+" minus the ACLs above it")
		if !sw0.eval("drop-hosts-web", mf) || !sw0.eval(a, mf) {
			t.Errorf("witness %s: not matched by drop-hosts-web and %s", mf, a)
		}
		for _, h := range sw0.above(a) {
			if sw0.eval(h, mf) {
				t.Errorf("witness %s of %s: matched by %s above it", mf, a, h)
			}
		}
	}
	// Every packet of drop-hosts-web tried (each address of its set, ports
	// and sources varied) is matched by an ACL above it.
	mf := sw0.witness(b, "drop-hosts-web")
	for _, src := range []string{"10.0.0.1", "10.0.0.2"} {
		for _, sport := range []string{"1", "80", "65535"} {
			for _, out := range []string{"p1", "p2"} {
				p := mf.Clone()
				for k, v := range map[string]string{"ip4.src": src, "tcp.src": sport, "outport": out} {
					if err := p.Set(k, v); err != nil {
						t.Fatal(err)
					}
				}
				if !sw0.eval("drop-hosts-web", p) {
					t.Fatalf("%s: not a packet of drop-hosts-web", p)
				}
				if !slices.ContainsFunc(sw0.above("drop-hosts-web"), func(h string) bool { return sw0.eval(h, p) }) {
					t.Errorf("%s: drop-hosts-web matches it and no ACL above it does", p)
				}
			}
		}
	}
	// drop-gw-web and drop-gw: not shadowed, each has a packet no ACL
	// above it matches.
	for _, n := range []string{"drop-gw-web", "drop-gw"} {
		if f, ok := shadowed[n]; ok {
			t.Errorf("%s reported shadowed: %s", n, f.Message)
		}
		rest := sw0.sets[n]
		for _, h := range sw0.above(n) {
			rest = sw0.m.Diff(rest, sw0.sets[h])
		}
		mf := sw0.witness(rest, n+" minus the ACLs above it")
		if !sw0.eval(n, mf) {
			t.Errorf("witness %s: %s does not match it", mf, n)
		}
		for _, h := range sw0.above(n) {
			if sw0.eval(h, mf) {
				t.Errorf("witness %s of %s: %s above it matches it", mf, n, h)
			}
		}
	}

	sw1 := newExactSwitch(t, s, "sw1")
	// drop-not-dns and allow-ntp-host overlap; drop-not-dns and
	// allow-dns-host do not.
	if f, ok := overlaps[[2]string{"drop-not-dns", "allow-ntp-host"}]; !ok || f.Severity != Warning {
		t.Errorf("drop-not-dns/allow-ntp-host: want an overlap warning, got %+v", f)
	}
	both := sw1.witness(sw1.m.And(sw1.sets["drop-not-dns"], sw1.sets["allow-ntp-host"]), "drop-not-dns ∩ allow-ntp-host")
	if !sw1.eval("drop-not-dns", both) || !sw1.eval("allow-ntp-host", both) {
		t.Errorf("witness %s: not matched by both drop-not-dns and allow-ntp-host", both)
	}
	if f, ok := overlaps[[2]string{"drop-not-dns", "allow-dns-host"}]; ok {
		t.Errorf("drop-not-dns/allow-dns-host reported: %s", f.Message)
	}
	dns := sw1.witness(sw1.sets["allow-dns-host"], "allow-dns-host")
	for _, dst := range []string{"1", "53", "65535"} {
		p := dns.Clone()
		if err := p.Set("udp.dst", dst); err != nil {
			t.Fatal(err)
		}
		if !sw1.eval("allow-dns-host", p) || sw1.eval("drop-not-dns", p) {
			t.Errorf("%s: want allow-dns-host's packet outside drop-not-dns", p)
		}
	}

	// allow-tcp on sw2: whether drop-resident shadows it depends on the
	// chassis; the finding says so and names the construct.
	f, ok = shadowed["allow-tcp"]
	if !ok || f.Severity != Info || !strings.HasPrefix(f.Message, "not exact") || !strings.Contains(f.Message, "is_chassis_resident") {
		t.Errorf("allow-tcp: want a not-exact finding naming is_chassis_resident, got %+v", f)
	} else if len(f.ACLs) != 2 || f.ACLs[1].Name != "drop-resident" {
		t.Errorf("allow-tcp: want drop-resident listed with it, got %+v", f.ACLs)
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "undecidable") || strings.Contains(f.Message, "cannot decide") {
			t.Errorf("%s %s: %s", f.Rule, f.ACLs[0].Name, f.Message)
		}
	}
}

// TestShadowedHow lints tiers-shadowed-how.yaml, where each packet of
// np-allow-some is decided first in another way, and checks that the
// finding lists the three ACLs, each with how it keeps np-allow-some from
// deciding (the earlier-tier one needs the exact sets: what a tier decides
// is its match minus the passes above it).
func TestShadowedHow(t *testing.T) {
	r := lintFixture(t, "tiers-shadowed-how.yaml")
	var f *Finding
	for i := range r.Findings {
		if r.Findings[i].Rule == RuleShadowed {
			if f != nil {
				t.Fatalf("two shadowed findings: %s and %s", f.ACLs[0].Name, r.Findings[i].ACLs[0].Name)
			}
			f = &r.Findings[i]
		}
	}
	if f == nil || f.ACLs[0].Name != "np-allow-some" || f.Severity != Warning {
		t.Fatalf("want np-allow-some shadowed (warning), got %+v", f)
	}
	want := map[string]string{
		"np-pass-web":   "pass at higher priority 300 in tier 2: hands the packets to the next tier",
		"np-drop-https": "higher priority 200 in tier 2 (drop)",
		"anp-drop-ssh":  "decides first at tier 1, before tier 2 (drop)",
	}
	got := map[string]string{}
	for _, a := range f.ACLs[1:] {
		got[a.Name] = a.How
	}
	if !maps.Equal(got, want) {
		t.Errorf("listed with np-allow-some:\n got %v\nwant %v", got, want)
	}
}

// TestShadowedHostWitness checks the answer shadowed.yaml's drop-host got
// when lint stopped saying "undecidable" (`ip4.src != 10.0.0.1' above
// it): every packet of drop-host tried — its set's witness with ports,
// sources and destinations varied — is matched by allow-not-gw (Eval).
func TestShadowedHostWitness(t *testing.T) {
	s, err := nbschema.LoadFixture(filepath.Join("testdata", "shadowed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sw1 := newExactSwitch(t, s, "sw1")
	mf := sw1.witness(sw1.sets["drop-host"], "drop-host")
	for _, sport := range []string{"1", "22", "65535"} {
		for _, dst := range []string{"10.0.0.1", "10.0.0.2", "192.168.1.1"} {
			p := mf.Clone()
			for k, v := range map[string]string{"tcp.src": sport, "tcp.dst": sport, "ip4.dst": dst} {
				if err := p.Set(k, v); err != nil {
					t.Fatal(err)
				}
			}
			if !sw1.eval("drop-host", p) || !sw1.eval("allow-not-gw", p) {
				t.Errorf("%s: want a packet of drop-host that allow-not-gw matches", p)
			}
		}
	}
	if sw1.m.Diff(sw1.sets["drop-host"], sw1.sets["allow-not-gw"]) != pset.Empty {
		t.Error("drop-host has packets allow-not-gw does not match")
	}
}
