package nbschema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// FixtureOptions tunes LoadFixtureWith and ParseFixtureWith.
type FixtureOptions struct {
	// Release is the OVN release the fixture is read for (--ovn-version);
	// it wins over the fixture's `ovn:` key. Without either, the fixture
	// is for release.Default(), the newest LTS.
	Release *release.Release
	// ReleaseFrom says where Release came from, for messages (default
	// "--ovn-version"; nb load: "the target NB's release").
	ReleaseFrom string
}

// LoadFixture reads the YAML fixture at path (format: docs/fixture-format.md)
// into a Snapshot. Problems in the fixture come back as FixtureErrors, each
// naming path:line:column and the field.
func LoadFixture(path string) (*Snapshot, error) {
	return LoadFixtureWith(path, FixtureOptions{})
}

// LoadFixtureWith is LoadFixture for opts.Release.
func LoadFixtureWith(path string, opts FixtureOptions) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	return ParseFixtureWith(path, data, opts)
}

// ParseFixture parses fixture text; name is the file name used in error
// messages and Origin. Every problem found is reported, as FixtureErrors.
func ParseFixture(name string, data []byte) (*Snapshot, error) {
	return ParseFixtureWith(name, data, FixtureOptions{})
}

// ParseFixtureWith parses fixture text for a release: opts.Release, else
// the fixture's `ovn:` key, else release.Default(); Snapshot.Release says
// which of the first two, and is nil without either (the caller applies
// the default). A table, column or value the release's NB schema does not have
// (ACL tier or action "pass" on 23.03, ...) is an error at its position
// naming the release that introduced it.
func ParseFixtureWith(name string, data []byte, opts FixtureOptions) (*Snapshot, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, FixtureErrors{syntaxError(name, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, FixtureErrors{{File: name, Line: extra.Line, Column: extra.Column,
			Msg: "a fixture is one YAML document; this is a second one"}}
	case err != io.EOF:
		return nil, FixtureErrors{syntaxError(name, err)}
	}
	b := newBuilder(name)
	if len(root.Content) > 0 {
		b.top(root.Content[0])
	}
	b.resolveRefs()
	b.checkFeatures(opts.Release, opts.ReleaseFrom)
	if len(b.errs) > 0 {
		return nil, b.errs.sorted()
	}
	b.snap.sortSets()
	return b.snap, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns a yaml.v3 parse error into a FixtureError. yaml.v3
// reports the line of a syntax error but not its column.
func syntaxError(name string, err error) *FixtureError {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FixtureError{File: name, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &FixtureError{File: name, Msg: "invalid YAML: " + msg}
}

// Top-level keys of a fixture, in the order WriteFixture emits them.
var topKeys = []string{"ovn", "nb_global", "switches", "port_groups", "address_sets",
	"load_balancers", "load_balancer_groups", "meters", "copps", "dhcp_options", "dns", "routers", "static_mac_bindings", "mirrors",
	"sample_collectors", "sampling_apps", "samples", "network_function_health_checks", "network_functions", "network_function_groups", "acls"}

func (b *builder) top(doc *yaml.Node) {
	f, ok := b.mapping(doc, "", topKeys...)
	if !ok {
		return
	}
	if f.has("ovn") {
		b.ovnRelease(f)
	}
	if f.has("nb_global") {
		b.global(f.val["nb_global"])
	}
	// Rows that others refer to first, so that names are known; references
	// are resolved at the end anyway, so the order in the file is free.
	for i, n := range b.list(f, "meters") {
		b.meter(n, index("meters", i))
	}
	for i, n := range b.list(f, "load_balancers") {
		b.loadBalancer(n, index("load_balancers", i), i)
	}
	for i, n := range b.list(f, "load_balancer_groups") {
		b.lbGroup(n, index("load_balancer_groups", i))
	}
	for i, n := range b.list(f, "copps") {
		b.copp(n, index("copps", i))
	}
	for i, n := range b.list(f, "dhcp_options") {
		b.dhcpOptions(n, index("dhcp_options", i), i)
	}
	for i, n := range b.list(f, "dns") {
		b.dns(n, index("dns", i), i)
	}
	for i, n := range b.list(f, "address_sets") {
		b.addressSet(n, index("address_sets", i))
	}
	for i, n := range b.list(f, "mirrors") {
		b.mirror(n, index("mirrors", i))
	}
	for i, n := range b.list(f, "routers") {
		b.router(n, index("routers", i))
	}
	for i, n := range b.list(f, "switches") {
		b.logicalSwitch(n, index("switches", i))
	}
	for i, n := range b.list(f, "static_mac_bindings") {
		b.staticMACBinding(n, index("static_mac_bindings", i), i)
	}
	for i, n := range b.list(f, "port_groups") {
		b.portGroup(n, index("port_groups", i))
	}
	for i, n := range b.list(f, "sample_collectors") {
		b.sampleCollector(n, index("sample_collectors", i))
	}
	for i, n := range b.list(f, "sampling_apps") {
		b.samplingApp(n, index("sampling_apps", i), i)
	}
	for i, n := range b.list(f, "samples") {
		b.sample(n, index("samples", i), i)
	}
	for i, n := range b.list(f, "network_function_health_checks") {
		b.nfHealthCheck(n, index("network_function_health_checks", i))
	}
	for i, n := range b.list(f, "network_functions") {
		b.networkFunction(n, index("network_functions", i))
	}
	for i, n := range b.list(f, "network_function_groups") {
		b.networkFunctionGroup(n, index("network_function_groups", i))
	}
	for i, n := range b.list(f, "acls") {
		b.attachedACL(n, index("acls", i), i)
	}
}

// attachedACL decodes an entry of the top-level acls list: an ACL that
// names the switch or port group it belongs to, for generated fixtures
// that keep their ACLs in one flat list.
func (b *builder) attachedACL(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, append([]string{"switch", "port_group"}, aclKeys...)...)
	if !ok {
		return
	}
	var table, key string
	switch {
	case f.has("switch") && f.has("port_group"):
		b.errorf(f.at("port_group"), path, "give either switch or port_group, not both")
		return
	case f.has("switch"):
		table, key = nbdb.LogicalSwitchTable, "switch"
	case f.has("port_group"):
		table, key = nbdb.PortGroupTable, "port_group"
	default:
		b.errorf(f.node, path, "a top-level ACL needs switch: or port_group: naming its owner")
		return
	}
	owner := b.str(f, key)
	ownerNode := f.at(key)
	delete(f.val, key)
	u := b.aclFields(f, "acls #"+strconv.Itoa(pos))
	if u == "" {
		return
	}
	b.refs = append(b.refs, ref{node: resolve(ownerNode), path: join(path, key), table: table, name: owner,
		set: func(o string) {
			if table == nbdb.LogicalSwitchTable {
				ls := b.snap.Switches[o]
				ls.ACLs = append(ls.ACLs, u)
			} else {
				pg := b.snap.PortGroups[o]
				pg.ACLs = append(pg.ACLs, u)
			}
		}})
}

func (b *builder) global(n *yaml.Node) {
	f, ok := b.mapping(n, "nb_global", "uuid", "name", "options", "external_ids")
	if !ok {
		return
	}
	g := &nbdb.NBGlobal{
		UUID:        b.rowUUID(f, nbdb.NBGlobalTable, ""),
		Name:        b.str(f, "name"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	b.snap.Global = g
}

func (b *builder) logicalSwitch(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "other_config", "external_ids", "ports", "acls",
		"load_balancers", "load_balancer_groups", "dns_records", "copp")
	if !ok {
		return
	}
	name := b.required(f, "name")
	ls := &nbdb.LogicalSwitch{
		UUID:        b.rowUUID(f, nbdb.LogicalSwitchTable, name),
		Name:        name,
		OtherConfig: b.strMap(f, "other_config"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	b.addName(nbdb.LogicalSwitchTable, name, ls.UUID, f.at("name"), join(path, "name"))
	b.snap.Switches[ls.UUID] = ls
	for i, pn := range b.list(f, "ports") {
		if u := b.port(pn, index(join(path, "ports"), i)); u != "" {
			ls.Ports = append(ls.Ports, u)
		}
	}
	ls.ACLs = b.acls(f, nbdb.LogicalSwitchTable, name)
	b.refList(f, "load_balancers", nbdb.LoadBalancerTable, func(u string) { ls.LoadBalancer = append(ls.LoadBalancer, u) })
	b.refList(f, "load_balancer_groups", nbdb.LoadBalancerGroupTable, func(u string) { ls.LoadBalancerGroup = append(ls.LoadBalancerGroup, u) })
	b.refList(f, "dns_records", nbdb.DNSTable, func(u string) { ls.DNSRecords = append(ls.DNSRecords, u) })
	b.refOne(f, "copp", nbdb.CoppTable, func(u string) { ls.Copp = &u })
}

// Logical_Switch_Port types (ovn-nb.xml); "switch" only from 25.03 on: a
// release feature, checked by checkFeatures.
var portTypes = []string{"", "router", "localnet", "localport", "l2gateway", "vtep", "external", "virtual", "remote", "switch"}

func (b *builder) port(n *yaml.Node, path string) string {
	f, ok := b.mapping(n, path, "uuid", "name", "type", "addresses", "dynamic_addresses", "port_security", "options",
		"dhcpv4_options", "dhcpv6_options", "enabled", "parent_name", "tag_request", "tag", "peer", "mirror_rules", "external_ids")
	if !ok {
		return ""
	}
	name := b.required(f, "name")
	p := &nbdb.LogicalSwitchPort{
		UUID:             b.rowUUID(f, nbdb.LogicalSwitchPortTable, name),
		Name:             name,
		Addresses:        b.strList(f, "addresses"),
		PortSecurity:     b.strList(f, "port_security"),
		DynamicAddresses: b.optStr(f, "dynamic_addresses"),
		Options:          b.strMap(f, "options"),
		ParentName:       b.optStr(f, "parent_name"),
		Peer:             b.optStr(f, "peer"),
		ExternalIDs:      b.strMap(f, "external_ids"),
	}
	if t := b.enum(f, "type", false, portTypes, ""); t != nil {
		p.Type = *t
		if p.Type == "switch" {
			b.needs(release.SwitchPort, f.at("type"), join(path, "type"))
		}
	}
	if f.has("peer") {
		b.needs(release.SwitchPort, f.at("peer"), join(path, "peer"))
	}
	if v, ok := b.boolean(f, "enabled"); ok {
		p.Enabled = &v
	}
	if v, ok := b.integer(f, "tag_request", 0, 4095); ok {
		p.TagRequest = &v
	}
	if v, ok := b.integer(f, "tag", 1, 4095); ok {
		p.Tag = &v
	}
	b.addName(nbdb.LogicalSwitchPortTable, name, p.UUID, f.at("name"), join(path, "name"))
	b.snap.Ports[p.UUID] = p
	b.refOne(f, "dhcpv4_options", nbdb.DHCPOptionsTable, func(u string) { p.Dhcpv4Options = &u })
	b.refOne(f, "dhcpv6_options", nbdb.DHCPOptionsTable, func(u string) { p.Dhcpv6Options = &u })
	b.refList(f, "mirror_rules", nbdb.MirrorTable, func(u string) { p.MirrorRules = append(p.MirrorRules, u) })
	return p.UUID
}

// ACL enumerations of the NB schema ("pass" only from 23.06 on: a
// release feature, checked by checkFeatures).
var (
	aclDirections = []string{nbdb.ACLDirectionFromLport, nbdb.ACLDirectionToLport}
	aclActions    = []string{nbdb.ACLActionAllow, nbdb.ACLActionAllowRelated, nbdb.ACLActionAllowStateless,
		nbdb.ACLActionDrop, nbdb.ACLActionReject, nbdb.ACLActionPass}
	aclSeverities = []string{nbdb.ACLSeverityAlert, nbdb.ACLSeverityWarning, nbdb.ACLSeverityNotice,
		nbdb.ACLSeverityInfo, nbdb.ACLSeverityDebug}
)

// acls decodes the acls list of a switch or port group.
func (b *builder) acls(f fields, ownerTable, ownerName string) []string {
	var out []string
	for i, n := range b.list(f, "acls") {
		if u := b.acl(n, index(join(f.path, "acls"), i), ownerTable+" "+ownerName+" acls "+strconv.Itoa(i)); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// aclKeys are the keys of an ACL entry.
var aclKeys = []string{"uuid", "direction", "priority", "match", "action", "tier", "log",
	"name", "severity", "meter", "label", "options", "external_ids", "sample_new", "sample_est", "network_function_group"}

func (b *builder) acl(n *yaml.Node, path, key string) string {
	f, ok := b.mapping(n, path, aclKeys...)
	if !ok {
		return ""
	}
	return b.aclFields(f, key)
}

func (b *builder) aclFields(f fields, key string) string {
	path := f.path
	a := &nbdb.ACL{
		UUID:        b.rowUUID(f, nbdb.ACLTable, key),
		Match:       b.present(f, "match"),
		Name:        b.optStr(f, "name"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if d := b.enum(f, "direction", true, aclDirections, ""); d != nil {
		a.Direction = *d
	}
	if v := b.enum(f, "action", true, aclActions, ""); v != nil {
		a.Action = *v
		if a.Action == nbdb.ACLActionPass {
			b.needs(release.ACLPass, f.at("action"), join(path, "action"))
		}
	}
	if f.has("tier") {
		a.Tier, _ = b.integer(f, "tier", 0, 3)
		b.needs(release.ACLTier, f.at("tier"), join(path, "tier"))
	}
	if f.has("priority") {
		a.Priority, _ = b.integer(f, "priority", 0, 32767)
	} else {
		b.errorf(f.node, join(path, "priority"), "missing (required; 0..32767)")
	}
	a.Label, _ = b.integer(f, "label", 0, 4294967295)
	a.Log, _ = b.boolean(f, "log")
	a.Severity = b.enum(f, "severity", false, aclSeverities, "")
	if a.Name != nil && len(*a.Name) > 63 {
		b.errorf(f.at("name"), join(path, "name"), "%d characters, at most 63 allowed", len(*a.Name))
	}
	if f.has("meter") {
		a.Meter = b.optStr(f, "meter")
		if a.Meter != nil {
			b.meterName(f.at("meter"), join(path, "meter"), *a.Meter)
		}
	}
	b.aclRefs(f, a)
	b.snap.ACLs[a.UUID] = a
	return a.UUID
}

func (b *builder) portGroup(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "ports", "acls", "external_ids")
	if !ok {
		return
	}
	name := b.required(f, "name")
	pg := &nbdb.PortGroup{
		UUID:        b.rowUUID(f, nbdb.PortGroupTable, name),
		Name:        name,
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	b.addName(nbdb.PortGroupTable, name, pg.UUID, f.at("name"), join(path, "name"))
	b.snap.PortGroups[pg.UUID] = pg
	b.refList(f, "ports", nbdb.LogicalSwitchPortTable, func(u string) { pg.Ports = append(pg.Ports, u) })
	pg.ACLs = b.acls(f, nbdb.PortGroupTable, name)
}

func (b *builder) addressSet(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "addresses", "external_ids")
	if !ok {
		return
	}
	name := b.required(f, "name")
	as := &nbdb.AddressSet{
		UUID:        b.rowUUID(f, nbdb.AddressSetTable, name),
		Name:        name,
		Addresses:   b.strList(f, "addresses"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	b.addName(nbdb.AddressSetTable, name, as.UUID, f.at("name"), join(path, "name"))
	b.snap.AddressSets[as.UUID] = as
}

var (
	lbProtocols       = []string{nbdb.LoadBalancerProtocolTCP, nbdb.LoadBalancerProtocolUDP, nbdb.LoadBalancerProtocolSCTP}
	lbSelectionFields = []string{"eth_src", "eth_dst", "ip_src", "ip_dst", "tp_src", "tp_dst"}
)

func (b *builder) loadBalancer(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "name", "protocol", "vips", "options", "selection_fields",
		"ip_port_mappings", "external_ids")
	if !ok {
		return
	}
	name := b.str(f, "name")
	lb := &nbdb.LoadBalancer{
		UUID:           b.rowUUID(f, nbdb.LoadBalancerTable, keyOr(name, pos)),
		Name:           name,
		Protocol:       b.enum(f, "protocol", false, lbProtocols, ""),
		Vips:           b.strMap(f, "vips"),
		Options:        b.strMap(f, "options"),
		IPPortMappings: b.strMap(f, "ip_port_mappings"),
		ExternalIDs:    b.strMap(f, "external_ids"),
	}
	for i, s := range b.strList(f, "selection_fields") {
		if !contains(lbSelectionFields, s) {
			b.errorf(b.list(f, "selection_fields")[i], index(join(path, "selection_fields"), i),
				"%q is not one of %v", s, lbSelectionFields)
			continue
		}
		lb.SelectionFields = append(lb.SelectionFields, s)
	}
	if name != "" {
		b.addName(nbdb.LoadBalancerTable, name, lb.UUID, f.at("name"), join(path, "name"))
	}
	b.snap.LoadBalancers[lb.UUID] = lb
}

// keyOr is the derived-UUID key of a row whose name is optional.
func keyOr(name string, pos int) string {
	if name != "" {
		return name
	}
	return "#" + strconv.Itoa(pos)
}

func (b *builder) lbGroup(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "load_balancers")
	if !ok {
		return
	}
	name := b.required(f, "name")
	g := &nbdb.LoadBalancerGroup{UUID: b.rowUUID(f, nbdb.LoadBalancerGroupTable, name), Name: name}
	b.addName(nbdb.LoadBalancerGroupTable, name, g.UUID, f.at("name"), join(path, "name"))
	b.snap.LBGroups[g.UUID] = g
	b.refList(f, "load_balancers", nbdb.LoadBalancerTable, func(u string) { g.LoadBalancer = append(g.LoadBalancer, u) })
}

func (b *builder) meter(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "unit", "fair", "bands", "external_ids")
	if !ok {
		return
	}
	name := b.required(f, "name")
	m := &nbdb.Meter{
		UUID:        b.rowUUID(f, nbdb.MeterTable, name),
		Name:        name,
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if u := b.enum(f, "unit", true, []string{nbdb.MeterUnitKbps, nbdb.MeterUnitPktps}, ""); u != nil {
		m.Unit = *u
	}
	if v, ok := b.boolean(f, "fair"); ok {
		m.Fair = &v
	}
	bands := b.list(f, "bands")
	if bn := resolve(f.val["bands"]); !f.has("bands") || bn.Kind == yaml.SequenceNode && len(bn.Content) == 0 {
		b.errorf(f.at("bands"), join(path, "bands"), "a meter needs at least one band")
	}
	for i, bn := range bands {
		bp := index(join(path, "bands"), i)
		bf, ok := b.mapping(bn, bp, "uuid", "action", "rate", "burst_size", "external_ids")
		if !ok {
			continue
		}
		band := &nbdb.MeterBand{
			UUID:        b.rowUUID(bf, nbdb.MeterBandTable, name+" bands "+strconv.Itoa(i)),
			Action:      nbdb.MeterBandActionDrop,
			ExternalIDs: b.strMap(bf, "external_ids"),
		}
		if a := b.enum(bf, "action", false, []string{nbdb.MeterBandActionDrop}, ""); a != nil {
			band.Action = *a
		}
		if bf.has("rate") {
			band.Rate, _ = b.integer(bf, "rate", 1, 4294967295)
		} else {
			b.errorf(bf.node, join(bp, "rate"), "missing (required; 1..4294967295)")
		}
		band.BurstSize, _ = b.integer(bf, "burst_size", 0, 4294967295)
		b.snap.MeterBands[band.UUID] = band
		m.Bands = append(m.Bands, band.UUID)
	}
	b.addName(nbdb.MeterTable, name, m.UUID, f.at("name"), join(path, "name"))
	b.snap.Meters[m.UUID] = m
}

func (b *builder) copp(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "meters", "external_ids")
	if !ok {
		return
	}
	name := b.required(f, "name")
	c := &nbdb.Copp{
		UUID:        b.rowUUID(f, nbdb.CoppTable, name),
		Name:        name,
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	meters, nodes := b.strMapNodes(f, "meters")
	for _, proto := range SortedKeys(meters) {
		b.meterName(nodes[proto], join(path, "meters")+"."+proto, meters[proto])
	}
	c.Meters = meters
	b.addName(nbdb.CoppTable, name, c.UUID, f.at("name"), join(path, "name"))
	b.snap.Copps[c.UUID] = c
}

func (b *builder) dhcpOptions(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "name", "cidr", "options", "external_ids")
	if !ok {
		return
	}
	name := b.str(f, "name")
	d := &nbdb.DHCPOptions{
		UUID:        b.rowUUID(f, nbdb.DHCPOptionsTable, keyOr(name, pos)),
		Cidr:        b.required(f, "cidr"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if d.Cidr != "" && !validCIDR(d.Cidr) {
		b.errorf(f.at("cidr"), join(path, "cidr"), "%q is not an IPv4 or IPv6 CIDR", d.Cidr)
	}
	if name != "" {
		b.addName(nbdb.DHCPOptionsTable, name, d.UUID, f.at("name"), join(path, "name"))
	}
	b.snap.DHCPOptions[d.UUID] = d
}

func (b *builder) dns(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "name", "records", "external_ids")
	if !ok {
		return
	}
	name := b.str(f, "name")
	d := &nbdb.DNS{
		UUID:        b.rowUUID(f, nbdb.DNSTable, keyOr(name, pos)),
		Records:     b.strMap(f, "records"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if name != "" {
		b.addName(nbdb.DNSTable, name, d.UUID, f.at("name"), join(path, "name"))
	}
	b.snap.DNS[d.UUID] = d
}
