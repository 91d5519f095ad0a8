package compile_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// cloneSnapshot deep-copies every row of s.
func cloneSnapshot(s *nbschema.Snapshot) *nbschema.Snapshot {
	out := nbschema.NewSnapshot()
	for _, t := range nbschema.Tables() {
		for id, row := range t.Rows(s) {
			t.Set(out, id, model.Clone(row))
		}
	}
	for k, v := range s.Origin {
		out.Origin[k] = v
	}
	out.Release = s.Release
	return out
}

func text(t testing.TB, l *lflow.Listing) string {
	t.Helper()
	var b bytes.Buffer
	if err := lflow.WriteText(&b, l); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// mutator makes random NB changes to a truth Snapshot and reports them as
// row changes (copies), the way a libovsdb cache would.
type mutator struct {
	r       *rand.Rand
	s       *nbschema.Snapshot
	rel     *release.Release // what the NB may use (nil: 23.03.1)
	n       int
	changed map[[2]string]bool
}

// has reports whether the mutator's release has feature f.
func (m *mutator) has(f *release.Fact) bool { return m.rel != nil && m.rel.Has(f) }

func (m *mutator) id(table string) string {
	m.n++
	return nbschema.DerivedUUID(table, fmt.Sprintf("mut-%d", m.n))
}

func (m *mutator) touch(table, id string) { m.changed[[2]string{table, id}] = true }

func pick[T any](r *rand.Rand, mp map[string]T) (string, T, bool) {
	var zero T
	if len(mp) == 0 {
		return "", zero, false
	}
	keys := nbschema.SortedKeys(mp)
	k := keys[r.IntN(len(keys))]
	return k, mp[k], true
}

var actions = []string{"allow", "allow-related", "allow-stateless", "drop", "reject"}

func (m *mutator) newACL() *nbdb.ACL {
	r := m.r
	a := &nbdb.ACL{UUID: m.id("ACL"), Priority: []int{100, 200, r.IntN(32768)}[r.IntN(3)], Action: actions[r.IntN(len(actions))]}
	a.Direction = "to-lport"
	if r.IntN(2) == 0 {
		a.Direction = "from-lport"
	}
	m.mutateACL(a)
	m.s.ACLs[a.UUID] = a
	m.touch(nbdb.ACLTable, a.UUID)
	return a
}

func (m *mutator) portName() string {
	_, p, ok := pick(m.r, m.s.Ports)
	if !ok {
		return "nope"
	}
	return p.Name
}

func (m *mutator) mutateACL(a *nbdb.ACL) {
	r := m.r
	n := 9
	if m.rel != nil && m.rel.Has(release.ACLTier) {
		n = 14
	}
	switch r.IntN(n) {
	case 0:
		a.Action = actions[r.IntN(len(actions))]
	case 1:
		// Few distinct priorities and matches: ACLs that produce the
		// same flows, which a patch must not remove while one remains.
		a.Priority = []int{100, 200, r.IntN(32768)}[r.IntN(3)]
	case 2:
		if a.Direction == "to-lport" {
			a.Direction = "from-lport"
		} else {
			a.Direction = "to-lport"
		}
	case 3:
		refs := []string{"ip4", "tcp && tcp.dst == 80", "outport == \"" + m.portName() + "\"", "ip4.src == $as_1", "inport == @pg_2", "udp"}
		a.Match = refs[r.IntN(len(refs))]
	case 4:
		a.Log = !a.Log
		sev := "warning"
		a.Severity = &sev
		if r.IntN(2) == 0 {
			name := fmt.Sprintf("n%d", r.IntN(5))
			a.Name = &name
		}
	case 5:
		if r.IntN(3) == 0 {
			a.Meter = nil
		} else {
			names := []string{"acl-log", "acl-log-fair", "m-new"}
			n := names[r.IntN(len(names))]
			a.Meter = &n
		}
		a.Log = true
	case 6:
		a.Label = r.IntN(3)
	case 7:
		a.Options = map[string]string{}
		if r.IntN(2) == 0 {
			a.Options["apply-after-lb"] = "true"
		}
		if r.IntN(2) == 0 {
			a.Options["log-related"] = "true"
		}
	case 8:
		a.Action = "allow-stateless"
	default:
		m.mutateACLRelease(a)
	}
	if a.Match == "" {
		a.Match = "ip4"
	}
}

func (m *mutator) addPort(ls *nbdb.LogicalSwitch) *nbdb.LogicalSwitchPort {
	p := &nbdb.LogicalSwitchPort{UUID: m.id("Logical_Switch_Port")}
	p.Name = "mp-" + p.UUID[:8]
	switch m.r.IntN(5) {
	case 0:
		p.Type = "router"
		p.Options = map[string]string{"router-port": m.lrpName()}
	case 1:
		p.Type = "localnet"
	}
	m.s.Ports[p.UUID] = p
	ls.Ports = append(ls.Ports, p.UUID)
	slices.Sort(ls.Ports)
	m.touch(nbdb.LogicalSwitchPortTable, p.UUID)
	m.touch(nbdb.LogicalSwitchTable, ls.UUID)
	return p
}

func (m *mutator) lrpName() string {
	names := []string{"lrp0", "lrp1", "lrp2"}
	return names[m.r.IntN(len(names))]
}

// deletePort removes an LSP and, like OVSDB's weak references, its
// port group memberships.
func (m *mutator) deletePort(id string) {
	delete(m.s.Ports, id)
	m.touch(nbdb.LogicalSwitchPortTable, id)
	for _, pg := range m.s.PortGroups {
		if i := slices.Index(pg.Ports, id); i >= 0 {
			pg.Ports = slices.Delete(pg.Ports, i, i+1)
			m.touch(nbdb.PortGroupTable, pg.UUID)
		}
	}
}

func (m *mutator) step() {
	r, s := m.r, m.s
	n := 23
	if m.rel != nil && m.rel.Has(release.ACLTier) {
		n = 30
	}
	switch r.IntN(n) {
	case 0, 1: // add an ACL to a switch or a port group
		a := m.newACL()
		if r.IntN(2) == 0 {
			if id, ls, ok := pick(r, s.Switches); ok {
				ls.ACLs = append(ls.ACLs, a.UUID)
				slices.Sort(ls.ACLs)
				m.touch(nbdb.LogicalSwitchTable, id)
			}
		} else if id, pg, ok := pick(r, s.PortGroups); ok {
			pg.ACLs = append(pg.ACLs, a.UUID)
			slices.Sort(pg.ACLs)
			m.touch(nbdb.PortGroupTable, id)
		}
	case 2: // remove an ACL
		id, _, ok := pick(r, s.ACLs)
		if !ok {
			return
		}
		delete(s.ACLs, id)
		m.touch(nbdb.ACLTable, id)
		for _, ls := range s.Switches {
			if i := slices.Index(ls.ACLs, id); i >= 0 {
				ls.ACLs = slices.Delete(ls.ACLs, i, i+1)
				m.touch(nbdb.LogicalSwitchTable, ls.UUID)
			}
		}
		for _, pg := range s.PortGroups {
			if i := slices.Index(pg.ACLs, id); i >= 0 {
				pg.ACLs = slices.Delete(pg.ACLs, i, i+1)
				m.touch(nbdb.PortGroupTable, pg.UUID)
			}
		}
	case 3, 4, 5: // change an ACL
		if id, a, ok := pick(r, s.ACLs); ok {
			m.mutateACL(a)
			m.touch(nbdb.ACLTable, id)
		}
	case 6: // port group membership
		id, pg, ok := pick(r, s.PortGroups)
		if !ok {
			return
		}
		if len(pg.Ports) > 0 && r.IntN(2) == 0 {
			pg.Ports = slices.Delete(pg.Ports, 0, 1)
		} else if pid, _, ok := pick(r, s.Ports); ok && !slices.Contains(pg.Ports, pid) {
			pg.Ports = append(pg.Ports, pid)
			slices.Sort(pg.Ports)
		}
		m.touch(nbdb.PortGroupTable, id)
	case 7: // port group added or deleted
		if r.IntN(2) == 0 {
			pg := &nbdb.PortGroup{UUID: m.id("Port_Group"), Name: fmt.Sprintf("pg_%d", r.IntN(8))}
			if pid, _, ok := pick(r, s.Ports); ok {
				pg.Ports = []string{pid}
			}
			pg.ACLs = []string{m.newACL().UUID}
			s.PortGroups[pg.UUID] = pg
			m.touch(nbdb.PortGroupTable, pg.UUID)
		} else if id, pg, ok := pick(r, s.PortGroups); ok {
			delete(s.PortGroups, id)
			m.touch(nbdb.PortGroupTable, id)
			for _, a := range pg.ACLs {
				delete(s.ACLs, a)
				m.touch(nbdb.ACLTable, a)
			}
		}
	case 8: // address set
		switch r.IntN(3) {
		case 0:
			as := &nbdb.AddressSet{UUID: m.id("Address_Set"), Name: fmt.Sprintf("as_%d", r.IntN(8)), Addresses: []string{"10.0.0.1"}}
			s.AddressSets[as.UUID] = as
			m.touch(nbdb.AddressSetTable, as.UUID)
		case 1:
			if id, _, ok := pick(r, s.AddressSets); ok {
				delete(s.AddressSets, id)
				m.touch(nbdb.AddressSetTable, id)
			}
		case 2:
			if id, as, ok := pick(r, s.AddressSets); ok {
				as.Addresses = append(as.Addresses, fmt.Sprintf("10.1.%d.%d", r.IntN(256), r.IntN(256)))
				slices.Sort(as.Addresses)
				m.touch(nbdb.AddressSetTable, id)
			}
		}
	case 9: // load balancer VIPs
		id, lb, ok := pick(r, s.LoadBalancers)
		if !ok || r.IntN(3) == 0 {
			proto := "udp"
			lb = &nbdb.LoadBalancer{UUID: m.id("Load_Balancer"), Name: "mlb", Protocol: &proto, Vips: map[string]string{}}
			id = lb.UUID
			s.LoadBalancers[id] = lb
			if rid, lr, ok := pick(r, s.Routers); ok && r.IntN(3) == 0 {
				// A router's LB (on its switches with install_ls_lb_from_router).
				lr.LoadBalancer = append(lr.LoadBalancer, id)
				slices.Sort(lr.LoadBalancer)
				m.touch(nbdb.LogicalRouterTable, rid)
			} else if sid, ls, ok := pick(r, s.Switches); ok {
				ls.LoadBalancer = append(ls.LoadBalancer, id)
				slices.Sort(ls.LoadBalancer)
				m.touch(nbdb.LogicalSwitchTable, sid)
			}
		}
		if len(lb.Vips) > 0 && r.IntN(2) == 0 {
			lb.Vips = map[string]string{}
		} else {
			lb.Vips = map[string]string{fmt.Sprintf("10.9.%d.1:80", r.IntN(4)): "10.0.0.2:8080"}
			if r.IntN(3) == 0 {
				lb.Vips["[fd00::1]:80"] = ""
			}
		}
		m.touch(nbdb.LoadBalancerTable, id)
	case 10: // load balancer group
		gid, g, ok := pick(r, s.LBGroups)
		if !ok {
			g = &nbdb.LoadBalancerGroup{UUID: m.id("Load_Balancer_Group"), Name: "g"}
			gid = g.UUID
			s.LBGroups[gid] = g
		}
		if lid, _, ok := pick(r, s.LoadBalancers); ok && r.IntN(2) == 0 {
			g.LoadBalancer = []string{lid}
		} else {
			g.LoadBalancer = nil
		}
		m.touch(nbdb.LoadBalancerGroupTable, gid)
		if rid, lr, ok := pick(r, s.Routers); ok && r.IntN(3) == 0 && !slices.Contains(lr.LoadBalancerGroup, gid) {
			lr.LoadBalancerGroup = append(lr.LoadBalancerGroup, gid)
			slices.Sort(lr.LoadBalancerGroup)
			m.touch(nbdb.LogicalRouterTable, rid)
		} else if sid, ls, ok := pick(r, s.Switches); ok && !slices.Contains(ls.LoadBalancerGroup, gid) {
			ls.LoadBalancerGroup = append(ls.LoadBalancerGroup, gid)
			slices.Sort(ls.LoadBalancerGroup)
			m.touch(nbdb.LogicalSwitchTable, sid)
		}
	case 11: // NB_Global option
		if s.Global == nil {
			s.Global = &nbdb.NBGlobal{UUID: m.id("NB_Global"), Options: map[string]string{}}
		}
		opts := map[string]string{}
		for k, v := range s.Global.Options {
			opts[k] = v
		}
		keys := []string{"use_ct_inv_match", "default_acl_drop", "controller_event", "debug_drop_collector_set",
			"install_ls_lb_from_router", "unrelated"}
		k := keys[r.IntN(len(keys))]
		switch r.IntN(3) {
		case 0:
			opts[k] = "true"
		case 1:
			opts[k] = "false"
		default:
			if k == "debug_drop_collector_set" {
				opts[k] = "7"
				opts["debug_drop_domain_id"] = fmt.Sprint(r.IntN(300))
			} else {
				delete(opts, k)
			}
		}
		s.Global.Options = opts
		m.touch(nbdb.NBGlobalTable, s.Global.UUID)
	case 12: // switch added
		ls := &nbdb.LogicalSwitch{UUID: m.id("Logical_Switch")}
		ls.Name = "msw-" + ls.UUID[:6]
		s.Switches[ls.UUID] = ls
		m.touch(nbdb.LogicalSwitchTable, ls.UUID)
		for range r.IntN(3) {
			m.addPort(ls)
		}
		if r.IntN(2) == 0 {
			ls.ACLs = []string{m.newACL().UUID}
		}
	case 13: // switch deleted, with its ports and ACLs
		id, ls, ok := pick(r, s.Switches)
		if !ok || len(s.Switches) < 3 {
			return
		}
		delete(s.Switches, id)
		m.touch(nbdb.LogicalSwitchTable, id)
		for _, p := range ls.Ports {
			m.deletePort(p)
		}
		for _, a := range ls.ACLs {
			delete(s.ACLs, a)
			m.touch(nbdb.ACLTable, a)
		}
	case 14: // port added
		if _, ls, ok := pick(r, s.Switches); ok {
			m.addPort(ls)
		}
	case 15: // port deleted
		sid, ls, ok := pick(r, s.Switches)
		if !ok || len(ls.Ports) == 0 {
			return
		}
		p := ls.Ports[r.IntN(len(ls.Ports))]
		ls.Ports = slices.DeleteFunc(ls.Ports, func(x string) bool { return x == p })
		m.touch(nbdb.LogicalSwitchTable, sid)
		m.deletePort(p)
	case 16: // port changed: type, router-port, DHCP, name
		id, p, ok := pick(r, s.Ports)
		if !ok {
			return
		}
		switch r.IntN(4) {
		case 0:
			p.Type = []string{"", "router", "localnet", "external"}[r.IntN(4)]
		case 1:
			p.Options = map[string]string{"router-port": m.lrpName()}
		case 2:
			if did, _, ok := pick(r, s.DHCPOptions); ok {
				if r.IntN(2) == 0 {
					p.Dhcpv4Options = &did
				} else {
					p.Dhcpv6Options = &did
				}
			} else {
				p.Dhcpv4Options = nil
			}
		case 3:
			p.Name = fmt.Sprintf("ren-%d", r.IntN(1000))
		}
		m.touch(nbdb.LogicalSwitchPortTable, id)
	case 17: // meter fairness or a new meter
		if id, mt, ok := pick(r, s.Meters); ok && r.IntN(3) > 0 {
			f := mt.Fair == nil || !*mt.Fair
			mt.Fair = &f
			m.touch(nbdb.MeterTable, id)
		} else {
			f := true
			mt := &nbdb.Meter{UUID: m.id("Meter"), Name: "m-new", Unit: "pktps", Fair: &f}
			for _, old := range s.Meters {
				if old.Name == mt.Name {
					return
				}
			}
			s.Meters[mt.UUID] = mt
			m.touch(nbdb.MeterTable, mt.UUID)
		}
	case 18: // DHCP options
		id, d, ok := pick(r, s.DHCPOptions)
		if !ok || r.IntN(3) == 0 {
			d = &nbdb.DHCPOptions{UUID: m.id("DHCP_Options"), Cidr: "10.0.0.0/24"}
			id = d.UUID
			s.DHCPOptions[id] = d
		}
		if r.IntN(2) == 0 {
			d.Options = map[string]string{"server_id": "10.0.0.1", "server_mac": "00:00:00:00:00:01", "lease_time": "3600"}
		} else {
			d.Options = map[string]string{"server_id": "00:00:00:00:00:02"}
		}
		m.touch(nbdb.DHCPOptionsTable, id)
	case 19: // DNS
		id, d, ok := pick(r, s.DNS)
		if !ok {
			d = &nbdb.DNS{UUID: m.id("DNS")}
			id = d.UUID
			s.DNS[id] = d
			if sid, ls, ok := pick(r, s.Switches); ok {
				ls.DNSRecords = append(ls.DNSRecords, id)
				slices.Sort(ls.DNSRecords)
				m.touch(nbdb.LogicalSwitchTable, sid)
			}
		}
		if len(d.Records) > 0 {
			d.Records = nil
		} else {
			d.Records = map[string]string{"vm1": "10.0.0.5"}
		}
		m.touch(nbdb.DNSTable, id)
	case 20: // router ports
		switch r.IntN(3) {
		case 0:
			lr := &nbdb.LogicalRouter{UUID: m.id("Logical_Router"), Name: "lr"}
			lrp := &nbdb.LogicalRouterPort{UUID: m.id("Logical_Router_Port"), Name: m.lrpName(), MAC: "00:00:00:00:01:01", Networks: []string{"10.0.0.1/24"}}
			lr.Ports = []string{lrp.UUID}
			s.Routers[lr.UUID], s.RouterPorts[lrp.UUID] = lr, lrp
			m.touch(nbdb.LogicalRouterTable, lr.UUID)
			m.touch(nbdb.LogicalRouterPortTable, lrp.UUID)
		case 1:
			if id, lr, ok := pick(r, s.Routers); ok {
				delete(s.Routers, id)
				m.touch(nbdb.LogicalRouterTable, id)
				for _, p := range lr.Ports {
					delete(s.RouterPorts, p)
					m.touch(nbdb.LogicalRouterPortTable, p)
				}
			}
		case 2:
			if id, lrp, ok := pick(r, s.RouterPorts); ok {
				lrp.Name = m.lrpName()
				m.touch(nbdb.LogicalRouterPortTable, id)
			}
		}
	case 21: // switch renamed
		if id, ls, ok := pick(r, s.Switches); ok {
			ls.Name = fmt.Sprintf("ren-sw-%d", r.IntN(100))
			if r.IntN(2) == 0 {
				ls.ExternalIDs = map[string]string{"neutron:network_name": "net"}
			}
			m.touch(nbdb.LogicalSwitchTable, id)
		}
	case 22: // a port listed by a second switch, or no longer: northd
		// gives it to the first switch by UUID
		pid, _, ok := pick(r, s.Ports)
		sid, ls, ok2 := pick(r, s.Switches)
		if !ok || !ok2 {
			return
		}
		if slices.Contains(ls.Ports, pid) {
			ls.Ports = slices.DeleteFunc(slices.Clone(ls.Ports), func(x string) bool { return x == pid })
		} else {
			ls.Ports = append(slices.Clone(ls.Ports), pid)
			slices.Sort(ls.Ports)
		}
		m.touch(nbdb.LogicalSwitchTable, sid)
	default:
		m.stepRelease()
	}
}

// changes returns the touched rows as RowChanges holding copies.
func (m *mutator) changes() []compile.RowChange {
	var out []compile.RowChange
	keys := make([][2]string, 0, len(m.changed))
	for k := range m.changed {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	m.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		var row model.Model
		if r, ok := nbschema.TableByName(k[0]).Row(m.s, k[1]); ok {
			row = model.Clone(r)
		}
		out = append(out, compile.RowChange{Table: k[0], UUID: k[1], Row: row})
	}
	m.changed = map[[2]string]bool{}
	return out
}

// baseNB is a small generated NB with every kind of row the mutator
// touches.
func baseNB(seed uint64) *nbschema.Snapshot {
	p := nbgen.Params{Switches: 6, PortsPerSwitch: 3, PortGroups: 5, AddressSets: 4, AddrsPerSet: 2,
		ACLs: 40, StatelessFrac: 0.3, LoadBalancers: 2, Seed: seed}
	s := nbgen.Generate(p)
	return s
}

// TestEngineProperty applies random NB change sequences to an engine and
// checks, after every batch, that the previous flows plus the delta equal
// a full compile of the new NB, and that the engine's own state does too.
// Its size is bounded by the number of seeds and batches, never by a clock:
// it always runs every batch.
func TestEngineProperty(t *testing.T) {
	seeds, batches := 8, 200
	if testing.Short() {
		seeds, batches = 3, 100
	}
	engineProperty(t, compile.Options{Release: release.MustLookup("23.03.1")}, nil, seeds, batches)
}

// TestEngineReleases is TestEngineProperty for every later release, with
// changes of the inputs it adds (tiers, pass, samples, persist-established,
// network functions, its options).
func TestEngineReleases(t *testing.T) {
	seeds, batches := 8, 200
	if testing.Short() {
		seeds, batches = 3, 100
	}
	for _, r := range release.Distinct() {
		if r == release.MustLookup("23.03.1") {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) { engineProperty(t, compile.Options{Release: r}, nil, seeds, batches) })
	}
}

// TestEngineNFBound is TestEngineReleases for the releases with network
// functions, with an SB where most ports are bound and up (some unbound,
// some on a second chassis): active functions come and go with the
// groups, functions and ports the changes touch (26.09: port bindings,
// vtap mode, functions without outport).
func TestEngineNFBound(t *testing.T) {
	seeds, batches := 4, 150
	if testing.Short() {
		seeds, batches = 2, 60
	}
	for _, r := range release.Distinct() {
		if !r.Has(release.NetworkFunction) {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) { engineProperty(t, compile.Options{Release: r}, boundSB, seeds, batches) })
	}
}

// boundSB binds the ports of s and those the mutator may add: most to
// chassis ch1 and up, every 7th unbound, every 11th on ch2, every 13th
// down; the network functions' monitors of every other port online.
func boundSB(s *nbschema.Snapshot) *compile.SBState {
	sb := &compile.SBState{Ports: map[string]compile.PortBinding{}, NFMonitorOnline: map[string]bool{}}
	names := []string{}
	for _, id := range nbschema.SortedKeys(s.Ports) {
		names = append(names, s.Ports[id].Name)
	}
	for n := 1; n <= 5000; n++ {
		names = append(names, "mp-"+nbschema.DerivedUUID(nbdb.LogicalSwitchPortTable, fmt.Sprintf("mut-%d", n))[:8])
	}
	for i, name := range names {
		switch {
		case i%7 == 3:
		case i%11 == 5:
			sb.Ports[name] = compile.PortBinding{Chassis: "ch2", Up: true}
		default:
			sb.Ports[name] = compile.PortBinding{Chassis: "ch1", Up: i%13 != 2}
		}
		sb.NFMonitorOnline[name] = i%2 == 0
	}
	return sb
}

// TestEngineSwitchScan is TestEngineReleases with the other producers of
// a removed flow looked for among the switch's ACLs as soon as a key has
// more candidates than the switch has ACLs (at 50k, a collector all
// samples share).
func TestEngineSwitchScan(t *testing.T) {
	defer compile.ScanSwitchACLs()()
	for _, r := range release.Distinct() {
		t.Run(r.Name(), func(t *testing.T) { engineProperty(t, compile.Options{Release: r}, nil, 3, 100) })
	}
}

// engineProperty checks the engine against full compiles after batches of
// random changes; sbFor, if not nil, gives the SB state to compile with
// (from the seed's initial NB).
func engineProperty(t *testing.T, opts compile.Options, sbFor func(*nbschema.Snapshot) *compile.SBState, seeds, batches int) {
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			truth := baseNB(seed + 1)
			seedRelease(truth, opts.Release)
			opts := opts
			if sbFor != nil {
				opts.SB = sbFor(truth)
			}
			e := compile.NewEngineWith(cloneSnapshot(truth), opts)
			prev := e.Listing()
			if got, want := text(t, prev), text(t, compile.CompileWith(cloneSnapshot(truth), opts).Flows); got != want {
				t.Fatalf("initial engine state differs from Compile")
			}
			m := &mutator{r: rand.New(rand.NewPCG(seed, 99)), s: truth, rel: opts.Release, changed: map[[2]string]bool{}}
			for b := range batches {
				for range 1 + m.r.IntN(3) {
					m.step()
				}
				d := e.Apply(m.changes())
				next := d.Apply(prev)
				// The engine keeps ACL ids from batch to batch, as
				// northd keeps its SB ACL_ID rows: compare with a full
				// compile given those ids, after checking that they are
				// an allocation northd could have made.
				o := opts
				o.ACLIDs = e.ACLIDs()
				rel := opts.Release
				if rel == nil { // the engine's: the snapshot's
					rel = truth.Release
				}
				checkACLIDs(t, truth, rel, o.ACLIDs)
				want := compile.CompileWith(cloneSnapshot(truth), o)
				wantText := text(t, want.Flows)
				if got := text(t, next); got != wantText {
					ch := lflow.Diff(want.Flows, next)
					var buf bytes.Buffer
					lflow.WriteDiff(&buf, "full compile", "previous + delta", ch)
					t.Fatalf("batch %d (%v): previous flows + delta differ from a full compile:\n%s", b, d.Changes, buf.String())
				}
				if got := text(t, e.Listing()); got != wantText {
					t.Fatalf("batch %d: engine listing differs from a full compile", b)
				}
				if got, want := fmt.Sprint(e.Problems()), fmt.Sprint(want.Problems); got != want {
					t.Fatalf("batch %d: problems differ:\nengine %s\nfull   %s", b, got, want)
				}
				prev = next
			}
		})
	}
}

// TestEngineResync checks that Resync against an unrelated NB lands on
// exactly its flows.
func TestEngineResync(t *testing.T) {
	e := compile.NewEngine(baseNB(1))
	other := baseNB(2)
	want := text(t, compile.Compile(cloneSnapshot(other)).Flows)
	prev := e.Listing()
	d := e.Resync(other)
	if got := text(t, d.Apply(prev)); got != want {
		t.Fatal("previous + resync delta differs from a full compile")
	}
	if got := text(t, e.Listing()); got != want {
		t.Fatal("engine after resync differs from a full compile")
	}
	if d2 := e.Resync(cloneSnapshot(other)); !d2.Empty() || len(d2.Changes) != 0 {
		t.Fatalf("second resync: %d datapaths, %d changes, want none", len(d2.Datapaths), len(d2.Changes))
	}
}
