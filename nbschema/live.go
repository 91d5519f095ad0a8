package nbschema

import (
	"context"
	"fmt"

	"github.com/aclc/aclc/internal/ovsdbconn"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// NB is a connection to a live OVN Northbound database. Client is the
// libovsdb client: after Monitor its cache holds the rows the compiler
// needs, and a watcher may add cache event handlers to it
// (Client.Cache().AddEventHandler) before calling Monitor.
type NB struct {
	// Client is the libovsdb client, connected to one of Remotes.
	Client client.Client
	// Remotes are the remotes Connect was given, after defaulting.
	Remotes []string
	opts    Options
}

// Connect connects to the first reachable NB remote of opts, checking that
// it serves the OVN_Northbound database. It does not read any rows yet;
// see Monitor and LoadLive. Close the NB when done.
func Connect(ctx context.Context, opts Options) (*NB, error) {
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("NB model: %w", err)
	}
	c, remotes, err := ovsdbconn.Dial(ctx, nbTarget, opts.conn(), dbModel)
	if err != nil {
		return nil, err
	}
	return &NB{Client: c, Remotes: remotes, opts: opts}, nil
}

// monitoredTables are the NB tables and columns aclc reads: what the ACL
// compiler needs and the fixture format expresses, nothing more (no
// NB_Global counters, no NAT, routes or policies, no port status; but
// dynamic_addresses, which northd fills for "dynamic" addresses and uses
// like addresses).
func monitoredTables() []client.MonitorOption {
	g := &nbdb.NBGlobal{}
	ls := &nbdb.LogicalSwitch{}
	lsp := &nbdb.LogicalSwitchPort{}
	pg := &nbdb.PortGroup{}
	as := &nbdb.AddressSet{}
	lb := &nbdb.LoadBalancer{}
	lbg := &nbdb.LoadBalancerGroup{}
	lr := &nbdb.LogicalRouter{}
	lrp := &nbdb.LogicalRouterPort{}
	return []client.MonitorOption{
		client.WithTable(g, &g.Name, &g.NbCfg, &g.Options, &g.ExternalIDs),
		client.WithTable(ls, &ls.Name, &ls.Ports, &ls.ACLs, &ls.LoadBalancer, &ls.LoadBalancerGroup,
			&ls.DNSRecords, &ls.Copp, &ls.OtherConfig, &ls.ExternalIDs),
		client.WithTable(lsp, &lsp.Name, &lsp.Type, &lsp.Addresses, &lsp.DynamicAddresses, &lsp.PortSecurity, &lsp.Options,
			&lsp.Dhcpv4Options, &lsp.Dhcpv6Options, &lsp.Enabled, &lsp.ParentName, &lsp.TagRequest,
			&lsp.Tag, &lsp.ExternalIDs),
		client.WithTable(pg, &pg.Name, &pg.Ports, &pg.ACLs, &pg.ExternalIDs),
		client.WithTable(as, &as.Name, &as.Addresses, &as.ExternalIDs),
		client.WithTable(&nbdb.ACL{}),
		client.WithTable(lb, &lb.Name, &lb.Protocol, &lb.Vips, &lb.Options, &lb.SelectionFields,
			&lb.IPPortMappings, &lb.ExternalIDs),
		client.WithTable(lbg, &lbg.Name, &lbg.LoadBalancer),
		client.WithTable(&nbdb.Meter{}),
		client.WithTable(&nbdb.MeterBand{}),
		client.WithTable(&nbdb.Copp{}),
		client.WithTable(&nbdb.DHCPOptions{}),
		client.WithTable(&nbdb.DNS{}),
		client.WithTable(lr, &lr.Name, &lr.Enabled, &lr.Options, &lr.ExternalIDs, &lr.Ports,
			&lr.LoadBalancer, &lr.LoadBalancerGroup, &lr.Copp),
		client.WithTable(lrp, &lrp.Name, &lrp.MAC, &lrp.Networks, &lrp.Options, &lrp.Peer,
			&lrp.Enabled, &lrp.ExternalIDs),
	}
}

// Monitor starts monitoring the tables and columns aclc reads; when it
// returns the client's cache holds their current rows and follows changes.
func (nb *NB) Monitor(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, nb.opts.readTimeout())
	defer cancel()
	if _, err := nb.Client.Monitor(ctx, nb.Client.NewMonitor(monitoredTables()...)); err != nil {
		return fmt.Errorf("monitor NB at %s: %w", nb.Client.CurrentEndpoint(), err)
	}
	return nil
}

// Snapshot copies the client's cache into a new Snapshot; Origin is
// "NB <Table> <uuid>" for every row. Call Monitor first. The tables are
// copied one after the other, so a transaction that lands meanwhile can
// show in some tables and not yet in others; a watcher should take
// snapshots once the cache has settled (after a quiet period), and the
// compiler must in any case tolerate references to missing rows.
func (nb *NB) Snapshot(ctx context.Context) (*Snapshot, error) {
	s := NewSnapshot()
	var err error
	list := func(result any) {
		if err == nil {
			if e := nb.Client.List(ctx, result); e != nil {
				err = fmt.Errorf("read NB cache: %w", e)
			}
		}
	}
	var (
		globals []*nbdb.NBGlobal
		lss     []*nbdb.LogicalSwitch
		lsps    []*nbdb.LogicalSwitchPort
		pgs     []*nbdb.PortGroup
		ass     []*nbdb.AddressSet
		acls    []*nbdb.ACL
		lbs     []*nbdb.LoadBalancer
		lbgs    []*nbdb.LoadBalancerGroup
		meters  []*nbdb.Meter
		bands   []*nbdb.MeterBand
		copps   []*nbdb.Copp
		dhcps   []*nbdb.DHCPOptions
		dnss    []*nbdb.DNS
		lrs     []*nbdb.LogicalRouter
		lrps    []*nbdb.LogicalRouterPort
	)
	list(&globals)
	list(&lss)
	list(&lsps)
	list(&pgs)
	list(&ass)
	list(&acls)
	list(&lbs)
	list(&lbgs)
	list(&meters)
	list(&bands)
	list(&copps)
	list(&dhcps)
	list(&dnss)
	list(&lrs)
	list(&lrps)
	if err != nil {
		return nil, err
	}
	if len(globals) > 1 {
		return nil, fmt.Errorf("NB has %d NB_Global rows, want at most 1", len(globals))
	}
	for _, g := range globals {
		s.Global = g
		s.Origin[g.UUID] = liveOrigin(nbdb.NBGlobalTable, g.UUID)
	}
	fill(s.Switches, s.Origin, nbdb.LogicalSwitchTable, lss, func(r *nbdb.LogicalSwitch) string { return r.UUID })
	fill(s.Ports, s.Origin, nbdb.LogicalSwitchPortTable, lsps, func(r *nbdb.LogicalSwitchPort) string { return r.UUID })
	fill(s.PortGroups, s.Origin, nbdb.PortGroupTable, pgs, func(r *nbdb.PortGroup) string { return r.UUID })
	fill(s.AddressSets, s.Origin, nbdb.AddressSetTable, ass, func(r *nbdb.AddressSet) string { return r.UUID })
	fill(s.ACLs, s.Origin, nbdb.ACLTable, acls, func(r *nbdb.ACL) string { return r.UUID })
	fill(s.LoadBalancers, s.Origin, nbdb.LoadBalancerTable, lbs, func(r *nbdb.LoadBalancer) string { return r.UUID })
	fill(s.LBGroups, s.Origin, nbdb.LoadBalancerGroupTable, lbgs, func(r *nbdb.LoadBalancerGroup) string { return r.UUID })
	fill(s.Meters, s.Origin, nbdb.MeterTable, meters, func(r *nbdb.Meter) string { return r.UUID })
	fill(s.MeterBands, s.Origin, nbdb.MeterBandTable, bands, func(r *nbdb.MeterBand) string { return r.UUID })
	fill(s.Copps, s.Origin, nbdb.CoppTable, copps, func(r *nbdb.Copp) string { return r.UUID })
	fill(s.DHCPOptions, s.Origin, nbdb.DHCPOptionsTable, dhcps, func(r *nbdb.DHCPOptions) string { return r.UUID })
	fill(s.DNS, s.Origin, nbdb.DNSTable, dnss, func(r *nbdb.DNS) string { return r.UUID })
	fill(s.Routers, s.Origin, nbdb.LogicalRouterTable, lrs, func(r *nbdb.LogicalRouter) string { return r.UUID })
	fill(s.RouterPorts, s.Origin, nbdb.LogicalRouterPortTable, lrps, func(r *nbdb.LogicalRouterPort) string { return r.UUID })
	s.sortSets()
	return s, nil
}

func fill[T model.Model](m map[string]T, origin map[string]string, table string, rows []T, id func(T) string) {
	for _, r := range rows {
		u := id(r)
		m[u] = r
		origin[u] = liveOrigin(table, u)
	}
}

func liveOrigin(table, uuid string) string { return "NB " + table + " " + uuid }

// Close disconnects from the NB.
func (nb *NB) Close() { nb.Client.Close() }

// LoadLive connects to the NB of opts, reads the tables aclc needs and
// returns them as a Snapshot. It is a one-shot read: it speaks OVSDB
// JSON-RPC itself and decodes the rows of one request straight into the
// Snapshot (see fastread.go), without libovsdb's cache; the Snapshot is
// the one Connect, Monitor and Snapshot would give.
func LoadLive(ctx context.Context, opts Options) (*Snapshot, error) {
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return fastRead(ctx, conn, remote, readMethod, opts.readTimeout())
}
