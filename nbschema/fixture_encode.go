package nbschema

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// WriteFixture writes snap as a YAML fixture that ParseFixture reads back
// into an equal Snapshot: every row carries its uuid, rows and keys come in
// a stable order, empty columns are left out. References use the target's
// name when that name is unique, else its uuid. A snapshot that a fixture
// cannot express (a port in two switches, an ACL in two owners, a
// reference to a row missing from the snapshot) is an error.
func WriteFixture(w io.Writer, snap *Snapshot) error {
	e := &encoder{snap: snap}
	root := e.root()
	if e.err != nil {
		return e.err
	}
	bw := bufio.NewWriter(w)
	for i := 0; i+1 < len(root.Content); i += 2 {
		if err := writeSection(bw, root.Content[i], root.Content[i+1]); err != nil {
			return fmt.Errorf("write fixture: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write fixture: %w", err)
	}
	return nil
}

// chunkNodes bounds how many YAML nodes are encoded at once. yaml.v3
// keeps every event of a document until the document ends, which makes one
// 50k-ACL document slow and memory-hungry; encoding a section a few rows
// at a time gives the same text.
const chunkNodes = 4096

// writeSection writes "key: value" as yaml.v3 would inside the top-level
// mapping, a chunk of list items at a time: each chunk is encoded as
// {key: [items...]} and, after the first, loses its "key:" line.
func writeSection(w io.Writer, key, value *yaml.Node) error {
	if value.Kind != yaml.SequenceNode {
		return encodeChunk(w, key, value, false)
	}
	items := value.Content
	for start := 0; start < len(items); {
		end, n := start, 0
		for end < len(items) && (end == start || n+countNodes(items[end]) <= chunkNodes) {
			n += countNodes(items[end])
			end++
		}
		chunk := &yaml.Node{Kind: yaml.SequenceNode, Style: value.Style, Content: items[start:end]}
		if err := encodeChunk(w, key, chunk, start > 0); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// encodeChunk writes {key: value}, without its first line when cont is set.
func encodeChunk(w io.Writer, key, value *yaml.Node, cont bool) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, value}}); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	out := buf.Bytes()
	if cont {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 || string(out[:nl]) != key.Value+":" {
			return fmt.Errorf("unexpected encoding of section %s: %.40q", key.Value, out)
		}
		out = out[nl+1:]
	}
	_, err := w.Write(out)
	return err
}

type encoder struct {
	snap *Snapshot
	err  error
	// owned records which rows have been written inline, to catch rows
	// with two owners.
	owned map[string]string
	// names counts the names of the rows that switches, routers and
	// groups refer to (a name used twice must be written as a UUID).
	names *refNames
}

// refNames counts load balancer, group, COPP and network function group
// names.
type refNames struct{ lb, lbg, copp, nfg map[string]int }

// refNames counts the referable names once per encoding.
func (e *encoder) refNames() *refNames {
	if e.names == nil {
		s := e.snap
		e.names = &refNames{
			lb:   countNames(s.LoadBalancers, func(r *nbdb.LoadBalancer) string { return r.Name }),
			lbg:  countNames(s.LBGroups, func(r *nbdb.LoadBalancerGroup) string { return r.Name }),
			copp: countNames(s.Copps, func(r *nbdb.Copp) string { return r.Name }),
			nfg:  countNames(s.NetworkFunctionGroups, func(r *nbdb.NetworkFunctionGroup) string { return r.Name }),
		}
	}
	return e.names
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("write fixture: "+format, args...)
	}
}

// node builders

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func put(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, strNode(key), v)
}

func putStr(m *yaml.Node, key, v string) {
	if v != "" {
		put(m, key, strNode(v))
	}
}

func putOptStr(m *yaml.Node, key string, v *string) {
	if v != nil {
		put(m, key, strNode(*v))
	}
}

func putInt(m *yaml.Node, key string, v int, always bool) {
	if v != 0 || always {
		put(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)})
	}
}

func putOptInt(m *yaml.Node, key string, v *int) {
	if v != nil {
		putInt(m, key, *v, true)
	}
}

func putBool(m *yaml.Node, key string, v bool) {
	if v {
		put(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
}

func putOptBool(m *yaml.Node, key string, v *bool) {
	if v != nil {
		put(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(*v)})
	}
}

// putList writes a flow-style list of strings, sorted when sorted is set.
func putList(m *yaml.Node, key string, list []string, sorted bool) {
	if len(list) == 0 {
		return
	}
	if sorted {
		list = append([]string(nil), list...)
		sort.Strings(list)
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range list {
		seq.Content = append(seq.Content, strNode(s))
	}
	put(m, key, seq)
}

// putMap writes a flow-style string map with sorted keys.
func putMap(m *yaml.Node, key string, v map[string]string) {
	if len(v) == 0 {
		return
	}
	mm := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, k := range SortedKeys(v) {
		put(mm, k, strNode(v[k]))
	}
	put(m, key, mm)
}

func putSeq(m *yaml.Node, key string, items []*yaml.Node) {
	if len(items) == 0 {
		return
	}
	put(m, key, &yaml.Node{Kind: yaml.SequenceNode, Content: items})
}

// rowNode starts a row's mapping with its uuid.
func rowNode(uuid string) *yaml.Node {
	m := mapNode()
	put(m, "uuid", strNode(uuid))
	return m
}

// own records that owner writes row uuid inline.
func (e *encoder) own(uuid, owner string) bool {
	if e.owned == nil {
		e.owned = map[string]string{}
	}
	if prev, ok := e.owned[uuid]; ok {
		e.fail("%s belongs to both %s and %s; a fixture row has one owner", uuid, prev, owner)
		return false
	}
	e.owned[uuid] = owner
	return true
}

// ownedRows looks up the rows an owner writes inline (ports, ACLs, bands,
// router ports), reporting missing rows and rows with a second owner.
func ownedRows[T any](e *encoder, owner, noun string, uuids []string, rows map[string]T) []T {
	var out []T
	for _, u := range uuids {
		r, ok := rows[u]
		if !ok {
			e.fail("%s lists %s %s, which is not in the snapshot", owner, noun, u)
			continue
		}
		if e.own(u, owner) {
			out = append(out, r)
		}
	}
	return out
}

// names counts the rows per name of a table, to decide whether a reference
// may use the name.
func countNames[T any](rows map[string]T, name func(T) string) map[string]int {
	out := map[string]int{}
	for _, r := range rows {
		out[name(r)]++
	}
	return out
}

// refs renders references to rows of one table: by name when it is unique
// (and not itself shaped like a UUID), else by uuid.
func (e *encoder) refs(what string, uuids []string, name func(string) (string, bool), counts map[string]int) []string {
	out := make([]string, 0, len(uuids))
	for _, u := range uuids {
		n, ok := name(u)
		switch {
		case !ok:
			e.fail("%s refers to %s, which is not in the snapshot", what, u)
		case n != "" && counts[n] == 1 && !canonicalUUID(n):
			out = append(out, n)
		default:
			out = append(out, u)
		}
	}
	return out
}

func (e *encoder) root() *yaml.Node {
	s := e.snap
	root := mapNode()
	if s.Release != nil {
		put(root, "ovn", strNode(s.Release.Name()))
	}
	if g := s.Global; g != nil {
		m := rowNode(g.UUID)
		putStr(m, "name", g.Name)
		putMap(m, "options", g.Options)
		putMap(m, "external_ids", g.ExternalIDs)
		put(root, "nb_global", m)
	}
	putSeq(root, "switches", e.switches())
	putSeq(root, "port_groups", e.portGroups())
	putSeq(root, "address_sets", e.addressSets())
	putSeq(root, "load_balancers", e.loadBalancers())
	putSeq(root, "load_balancer_groups", e.lbGroups())
	putSeq(root, "meters", e.meters())
	putSeq(root, "copps", e.copps())
	putSeq(root, "dhcp_options", e.dhcpOptions())
	putSeq(root, "dns", e.dnsRows())
	putSeq(root, "routers", e.routers())
	putSeq(root, "static_mac_bindings", e.staticMACBindings())
	putSeq(root, "mirrors", e.mirrors())
	e.sampleSections(root)
	e.checkOwned()
	return root
}

// byName orders the UUIDs of rows by name, then UUID.
func byName[T any](rows map[string]T, name func(T) string) []string {
	keys := SortedKeys(rows)
	sort.SliceStable(keys, func(i, j int) bool { return name(rows[keys[i]]) < name(rows[keys[j]]) })
	return keys
}

// checkOwned reports ports, ACLs, bands and router ports that no owner wrote.
func (e *encoder) checkOwned() {
	for _, t := range tables {
		if t.Owner == "" {
			continue
		}
		for _, k := range t.uuids(e.snap) {
			if _, ok := e.owned[k]; !ok {
				e.fail("%s %s belongs to no %s; a fixture cannot express it", t.Name, k, t.Owner)
			}
		}
	}
}

func (e *encoder) switches() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	n := e.refNames()
	lbNames, lbgNames, coppNames := n.lb, n.lbg, n.copp
	for _, id := range byName(s.Switches, func(r *nbdb.LogicalSwitch) string { return r.Name }) {
		ls := s.Switches[id]
		what := "switch " + ls.Name
		m := rowNode(ls.UUID)
		putStr(m, "name", ls.Name)
		putMap(m, "other_config", ls.OtherConfig)
		putMap(m, "external_ids", ls.ExternalIDs)
		putSeq(m, "ports", e.ports(what, ls.Ports))
		putSeq(m, "acls", e.acls(what, ls.ACLs))
		putList(m, "load_balancers", e.refs(what, ls.LoadBalancer, e.lbName, lbNames), true)
		putList(m, "load_balancer_groups", e.refs(what, ls.LoadBalancerGroup, e.lbgName, lbgNames), true)
		putList(m, "dns_records", e.refs(what, ls.DNSRecords, e.dnsName, nil), true)
		if ls.Copp != nil {
			if r := e.refs(what, []string{*ls.Copp}, e.coppName, coppNames); len(r) == 1 {
				put(m, "copp", strNode(r[0]))
			}
		}
		out = append(out, m)
	}
	return out
}

func (e *encoder) lbName(u string) (string, bool) {
	r, ok := e.snap.LoadBalancers[u]
	if !ok {
		return "", false
	}
	return r.Name, true
}

func (e *encoder) lbgName(u string) (string, bool) {
	r, ok := e.snap.LBGroups[u]
	if !ok {
		return "", false
	}
	return r.Name, true
}

func (e *encoder) coppName(u string) (string, bool) {
	r, ok := e.snap.Copps[u]
	if !ok {
		return "", false
	}
	return r.Name, true
}

func (e *encoder) dnsName(u string) (string, bool) {
	_, ok := e.snap.DNS[u]
	return "", ok
}

// dhcpHandle is the name a dhcp_options entry gets in a written fixture:
// its cidr when no other entry has the same, else none (references then
// use the uuid).
func (e *encoder) dhcpHandle(u string) (string, bool) {
	r, ok := e.snap.DHCPOptions[u]
	if !ok {
		return "", false
	}
	n := 0
	for _, o := range e.snap.DHCPOptions {
		if o.Cidr == r.Cidr {
			n++
		}
	}
	if n != 1 || canonicalUUID(r.Cidr) {
		return "", true
	}
	return r.Cidr, true
}

func (e *encoder) ports(owner string, uuids []string) []*yaml.Node {
	rows := ownedRows(e, owner, "port", uuids, e.snap.Ports)
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Name != rows[j].Name {
			return rows[i].Name < rows[j].Name
		}
		return rows[i].UUID < rows[j].UUID
	})
	var out []*yaml.Node
	for _, p := range rows {
		m := rowNode(p.UUID)
		putStr(m, "name", p.Name)
		putStr(m, "type", p.Type)
		putList(m, "addresses", p.Addresses, false)
		putOptStr(m, "dynamic_addresses", p.DynamicAddresses)
		putList(m, "port_security", p.PortSecurity, false)
		putMap(m, "options", p.Options)
		e.putDHCP(m, "dhcpv4_options", owner, p.Dhcpv4Options)
		e.putDHCP(m, "dhcpv6_options", owner, p.Dhcpv6Options)
		putOptBool(m, "enabled", p.Enabled)
		putOptStr(m, "parent_name", p.ParentName)
		putOptInt(m, "tag_request", p.TagRequest)
		putOptInt(m, "tag", p.Tag)
		putOptStr(m, "peer", p.Peer)
		e.putMirrorRules(m, p)
		putMap(m, "external_ids", p.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) putDHCP(m *yaml.Node, key, owner string, u *string) {
	if u == nil {
		return
	}
	h, ok := e.dhcpHandle(*u)
	switch {
	case !ok:
		e.fail("%s: a port's %s refers to %s, which is not in the snapshot", owner, key, *u)
	case h != "":
		put(m, key, strNode(h))
	default:
		put(m, key, strNode(*u))
	}
}

func (e *encoder) acls(owner string, uuids []string) []*yaml.Node {
	rows := ownedRows(e, owner, "ACL", uuids, e.snap.ACLs)
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch {
		case a.Priority != b.Priority:
			return a.Priority > b.Priority
		case a.Direction != b.Direction:
			return a.Direction < b.Direction
		case a.Match != b.Match:
			return a.Match < b.Match
		}
		return a.UUID < b.UUID
	})
	var out []*yaml.Node
	for _, a := range rows {
		m := rowNode(a.UUID)
		put(m, "direction", strNode(a.Direction))
		putInt(m, "priority", a.Priority, true)
		put(m, "match", strNode(a.Match))
		put(m, "action", strNode(a.Action))
		putInt(m, "tier", a.Tier, false)
		putBool(m, "log", a.Log)
		putOptStr(m, "name", a.Name)
		putOptStr(m, "severity", a.Severity)
		putOptStr(m, "meter", a.Meter)
		putInt(m, "label", a.Label, false)
		putMap(m, "options", a.Options)
		putMap(m, "external_ids", a.ExternalIDs)
		putOptStr(m, "sample_new", a.SampleNew)
		putOptStr(m, "sample_est", a.SampleEst)
		e.nfgRef(m, owner, a.NetworkFunctionGroup)
		m.Style = yaml.FlowStyle
		out = append(out, m)
	}
	return out
}

func (e *encoder) portGroups() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	portNames := countNames(s.Ports, func(r *nbdb.LogicalSwitchPort) string { return r.Name })
	portName := func(u string) (string, bool) {
		p, ok := s.Ports[u]
		if !ok {
			return "", false
		}
		return p.Name, true
	}
	for _, id := range byName(s.PortGroups, func(r *nbdb.PortGroup) string { return r.Name }) {
		pg := s.PortGroups[id]
		what := "port group " + pg.Name
		m := rowNode(pg.UUID)
		putStr(m, "name", pg.Name)
		putList(m, "ports", e.refs(what, pg.Ports, portName, portNames), true)
		putSeq(m, "acls", e.acls(what, pg.ACLs))
		putMap(m, "external_ids", pg.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) addressSets() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.AddressSets, func(r *nbdb.AddressSet) string { return r.Name }) {
		as := s.AddressSets[id]
		m := rowNode(as.UUID)
		putStr(m, "name", as.Name)
		putList(m, "addresses", as.Addresses, false)
		putMap(m, "external_ids", as.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) loadBalancers() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.LoadBalancers, func(r *nbdb.LoadBalancer) string { return r.Name }) {
		lb := s.LoadBalancers[id]
		m := rowNode(lb.UUID)
		putStr(m, "name", lb.Name)
		putOptStr(m, "protocol", lb.Protocol)
		putMap(m, "vips", lb.Vips)
		putMap(m, "options", lb.Options)
		putList(m, "selection_fields", lb.SelectionFields, true)
		putMap(m, "ip_port_mappings", lb.IPPortMappings)
		putMap(m, "external_ids", lb.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) lbGroups() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	lbNames := e.refNames().lb
	for _, id := range byName(s.LBGroups, func(r *nbdb.LoadBalancerGroup) string { return r.Name }) {
		g := s.LBGroups[id]
		m := rowNode(g.UUID)
		putStr(m, "name", g.Name)
		putList(m, "load_balancers", e.refs("load balancer group "+g.Name, g.LoadBalancer, e.lbName, lbNames), true)
		out = append(out, m)
	}
	return out
}

func (e *encoder) meters() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.Meters, func(r *nbdb.Meter) string { return r.Name }) {
		mt := s.Meters[id]
		what := "meter " + mt.Name
		m := rowNode(mt.UUID)
		putStr(m, "name", mt.Name)
		put(m, "unit", strNode(mt.Unit))
		putOptBool(m, "fair", mt.Fair)
		var bands []*yaml.Node
		for _, b := range ownedRows(e, what, "band", slices.Sorted(slices.Values(mt.Bands)), s.MeterBands) {
			bm := rowNode(b.UUID)
			put(bm, "action", strNode(b.Action))
			putInt(bm, "rate", b.Rate, true)
			putInt(bm, "burst_size", b.BurstSize, false)
			putMap(bm, "external_ids", b.ExternalIDs)
			bm.Style = yaml.FlowStyle
			bands = append(bands, bm)
		}
		putSeq(m, "bands", bands)
		putMap(m, "external_ids", mt.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) copps() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.Copps, func(r *nbdb.Copp) string { return r.Name }) {
		c := s.Copps[id]
		m := rowNode(c.UUID)
		putStr(m, "name", c.Name)
		putMap(m, "meters", c.Meters)
		putMap(m, "external_ids", c.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) dhcpOptions() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.DHCPOptions, func(r *nbdb.DHCPOptions) string { return r.Cidr }) {
		d := s.DHCPOptions[id]
		m := rowNode(d.UUID)
		if h, _ := e.dhcpHandle(id); h != "" {
			putStr(m, "name", h)
		}
		put(m, "cidr", strNode(d.Cidr))
		putMap(m, "options", d.Options)
		putMap(m, "external_ids", d.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) dnsRows() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range SortedKeys(s.DNS) {
		d := s.DNS[id]
		m := rowNode(d.UUID)
		putMap(m, "records", d.Records)
		putMap(m, "external_ids", d.ExternalIDs)
		out = append(out, m)
	}
	return out
}

func (e *encoder) routers() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	n := e.refNames()
	lbNames, lbgNames, coppNames := n.lb, n.lbg, n.copp
	for _, id := range byName(s.Routers, func(r *nbdb.LogicalRouter) string { return r.Name }) {
		lr := s.Routers[id]
		what := "router " + lr.Name
		m := rowNode(lr.UUID)
		putStr(m, "name", lr.Name)
		putOptBool(m, "enabled", lr.Enabled)
		putMap(m, "options", lr.Options)
		putMap(m, "external_ids", lr.ExternalIDs)
		var ports []*yaml.Node
		rows := ownedRows(e, what, "port", lr.Ports, s.RouterPorts)
		sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
		for _, p := range rows {
			pm := rowNode(p.UUID)
			putStr(pm, "name", p.Name)
			putStr(pm, "mac", p.MAC)
			putList(pm, "networks", p.Networks, false)
			putMap(pm, "options", p.Options)
			putOptStr(pm, "peer", p.Peer)
			putOptBool(pm, "enabled", p.Enabled)
			putMap(pm, "external_ids", p.ExternalIDs)
			putSeq(pm, "gateway_chassis", e.gatewayChassis("router port "+p.Name, p.GatewayChassis))
			if p.HaChassisGroup != nil {
				if g := e.haChassisGroup("router port "+p.Name, *p.HaChassisGroup); g != nil {
					put(pm, "ha_chassis_group", g)
				}
			}
			putMap(pm, "ipv6_ra_configs", p.Ipv6RaConfigs)
			if len(p.Ipv6Prefix) > 0 {
				e.fail("router port %s: ipv6_prefix is not part of the fixture format", p.Name)
			}
			ports = append(ports, pm)
		}
		putSeq(m, "ports", ports)
		e.routerRows(m, what, lr)
		putList(m, "load_balancers", e.refs(what, lr.LoadBalancer, e.lbName, lbNames), true)
		putList(m, "load_balancer_groups", e.refs(what, lr.LoadBalancerGroup, e.lbgName, lbgNames), true)
		if lr.Copp != nil {
			if r := e.refs(what, []string{*lr.Copp}, e.coppName, coppNames); len(r) == 1 {
				put(m, "copp", strNode(r[0]))
			}
		}
		out = append(out, m)
	}
	return out
}

// routerRows writes a router's static routes, policies and NAT rules, in
// the order of their UUIDs (OVSDB set order).
func (e *encoder) routerRows(m *yaml.Node, what string, lr *nbdb.LogicalRouter) {
	s := e.snap
	var routes, policies, nats []*yaml.Node
	for _, r := range ownedRows(e, what, "static route", lr.StaticRoutes, s.StaticRoutes) {
		n := rowNode(r.UUID)
		putStr(n, "ip_prefix", r.IPPrefix)
		putStr(n, "nexthop", r.Nexthop)
		putOptStr(n, "policy", r.Policy)
		putOptStr(n, "output_port", r.OutputPort)
		putStr(n, "route_table", r.RouteTable)
		putMap(n, "options", r.Options)
		putMap(n, "external_ids", r.ExternalIDs)
		if r.BFD != nil {
			e.fail("%s static route %s: bfd is not part of the fixture format", what, r.UUID)
		}
		routes = append(routes, n)
	}
	for _, p := range ownedRows(e, what, "policy", lr.Policies, s.Policies) {
		n := rowNode(p.UUID)
		putInt(n, "priority", p.Priority, true)
		putStr(n, "match", p.Match)
		putStr(n, "action", p.Action)
		putOptStr(n, "nexthop", p.Nexthop)
		putList(n, "nexthops", p.Nexthops, false)
		putMap(n, "options", p.Options)
		putMap(n, "external_ids", p.ExternalIDs)
		policies = append(policies, n)
	}
	for _, r := range ownedRows(e, what, "NAT rule", lr.Nat, s.NATs) {
		n := rowNode(r.UUID)
		putStr(n, "type", r.Type)
		putStr(n, "external_ip", r.ExternalIP)
		putStr(n, "logical_ip", r.LogicalIP)
		putOptStr(n, "logical_port", r.LogicalPort)
		putOptStr(n, "external_mac", r.ExternalMAC)
		putMap(n, "options", r.Options)
		putMap(n, "external_ids", r.ExternalIDs)
		if r.AllowedExtIPs != nil || r.ExemptedExtIPs != nil || r.GatewayPort != nil || r.ExternalPortRange != "" {
			e.fail("%s NAT %s: allowed_ext_ips, exempted_ext_ips, gateway_port and external_port_range are not part of the fixture format", what, r.UUID)
		}
		nats = append(nats, n)
	}
	putSeq(m, "static_routes", routes)
	putSeq(m, "policies", policies)
	putSeq(m, "nat", nats)
}

// gatewayChassis writes a router port's gateway_chassis rows.
func (e *encoder) gatewayChassis(what string, uuids []string) []*yaml.Node {
	var out []*yaml.Node
	for _, g := range ownedRows(e, what, "gateway chassis", uuids, e.snap.GatewayChassis) {
		n := rowNode(g.UUID)
		putStr(n, "name", g.Name)
		putStr(n, "chassis_name", g.ChassisName)
		putInt(n, "priority", g.Priority, false)
		putMap(n, "options", g.Options)
		putMap(n, "external_ids", g.ExternalIDs)
		out = append(out, n)
	}
	return out
}

// haChassisGroup writes a router port's HA chassis group and its
// HA_Chassis rows (by chassis name).
func (e *encoder) haChassisGroup(what, uuid string) *yaml.Node {
	gs := ownedRows(e, what, "HA chassis group", []string{uuid}, e.snap.HAChassisGroups)
	if len(gs) == 0 {
		return nil
	}
	g := gs[0]
	n := rowNode(g.UUID)
	putStr(n, "name", g.Name)
	var chassis []*yaml.Node
	rows := ownedRows(e, "HA chassis group "+g.Name, "HA chassis", g.HaChassis, e.snap.HAChassis)
	sort.Slice(rows, func(i, j int) bool { return rows[i].ChassisName < rows[j].ChassisName })
	for _, c := range rows {
		cn := rowNode(c.UUID)
		putStr(cn, "chassis_name", c.ChassisName)
		putInt(cn, "priority", c.Priority, false)
		putMap(cn, "external_ids", c.ExternalIDs)
		chassis = append(chassis, cn)
	}
	putSeq(n, "ha_chassis", chassis)
	putMap(n, "external_ids", g.ExternalIDs)
	return n
}

// staticMACBindings writes the Static_MAC_Binding rows, by port and IP.
func (e *encoder) staticMACBindings() []*yaml.Node {
	s := e.snap
	var out []*yaml.Node
	for _, id := range byName(s.StaticMACBindings, func(m *nbdb.StaticMACBinding) string { return m.LogicalPort + " " + m.IP }) {
		m := s.StaticMACBindings[id]
		n := rowNode(m.UUID)
		putStr(n, "logical_port", m.LogicalPort)
		putStr(n, "ip", m.IP)
		putStr(n, "mac", m.MAC)
		putBool(n, "override_dynamic_mac", m.OverrideDynamicMAC)
		out = append(out, n)
	}
	return out
}
