package watch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/aclc/aclc/internal/ovsdb/vswitch"
)

// ctZonePrefix is the external_ids key prefix under which ovn-controller
// records, on the integration bridge, the conntrack zone of each logical
// port: ct-zone-<logical port name>=<zone>.
const ctZonePrefix = "ct-zone-"

// OVSZones follows ovn-controller's zone assignments in an Open_vSwitch
// database (the external_ids of every Bridge row) over libovsdb. It keeps
// the last zone of every port it has seen, also after the key went away,
// so that a deleted port's zone can still be flushed.
type OVSZones struct {
	c   client.Client
	log *slog.Logger

	mu    sync.Mutex
	zones map[string]uint16
}

// NewOVSZones connects to the Open_vSwitch database at remote (reconnecting
// when the connection drops) and starts following the Bridge table.
func NewOVSZones(ctx context.Context, remote string, log *slog.Logger) (*OVSZones, error) {
	dbModel, err := vswitch.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("Open_vSwitch model: %w", err)
	}
	bo := backoff.NewExponentialBackOff()
	bo.MaxInterval = 10 * time.Second
	bo.MaxElapsedTime = 0
	c, err := client.NewOVSDBClient(dbModel, client.WithEndpoint(remote),
		client.WithReconnect(10*time.Second, bo), client.WithInactivityCheck(20*time.Second, 10*time.Second, bo))
	if err != nil {
		return nil, fmt.Errorf("--ovs %s: %w", remote, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		return nil, fmt.Errorf("--ovs %s: %w", remote, err)
	}
	z := &OVSZones{c: c, log: log, zones: map[string]uint16{}}
	c.Cache().AddEventHandler(z)
	br := &vswitch.Bridge{}
	if _, err := c.Monitor(cctx, c.NewMonitor(client.WithTable(br, &br.Name, &br.ExternalIDs))); err != nil {
		c.Close()
		return nil, fmt.Errorf("--ovs %s: monitor Bridge: %w", remote, err)
	}
	var bridges []*vswitch.Bridge
	if err := c.List(cctx, &bridges); err != nil {
		c.Close()
		return nil, fmt.Errorf("--ovs %s: %w", remote, err)
	}
	for _, b := range bridges {
		z.learn(b)
	}
	return z, nil
}

func (z *OVSZones) learn(m model.Model) {
	b, ok := m.(*vswitch.Bridge)
	if !ok {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	for k, v := range b.ExternalIDs {
		port, ok := strings.CutPrefix(k, ctZonePrefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || ctnetlink.CheckZone(n) != nil {
			z.log.Warn("ignoring malformed ct-zone key", "bridge", b.Name, "key", k, "value", v)
			continue
		}
		z.zones[port] = uint16(n)
	}
}

// OnAdd implements cache.EventHandler.
func (z *OVSZones) OnAdd(_ string, m model.Model) { z.learn(m) }

// OnUpdate implements cache.EventHandler.
func (z *OVSZones) OnUpdate(_ string, _, m model.Model) { z.learn(m) }

// OnDelete implements cache.EventHandler: zones are remembered.
func (z *OVSZones) OnDelete(string, model.Model) {}

// Zone implements ZoneSource.
func (z *OVSZones) Zone(port string) (uint16, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	n, ok := z.zones[port]
	return n, ok
}

// Close disconnects from the Open_vSwitch database.
func (z *OVSZones) Close() error {
	z.c.Close()
	return nil
}
