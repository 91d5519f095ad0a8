package sbschema

import (
	"context"
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/sbschema/sbdb"
)

// DefaultRemote is the SB remote used when neither the options nor
// $OVN_SB_DB give one, as for ovn-sbctl.
const DefaultRemote = "unix:/var/run/ovn/ovnsb_db.sock"

var sbTarget = ovsdbconn.Target{
	DB: "OVN_Southbound", Label: "SB", EnvVar: "OVN_SB_DB", DefaultRemote: DefaultRemote,
	Schema: "the SB columns aclc reads (OVN 23.03's SB schema 20.27.0, which later schemas extend)",
	Hint:   "; the SB is ovnsb_db.sock or port 6642",
}

// Connect connects to the first reachable SB remote of opts, checking that
// it serves OVN_Southbound. Close the client when done.
func Connect(ctx context.Context, opts ovsdbconn.Options) (client.Client, error) {
	dbModel, err := sbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("SB model: %w", err)
	}
	c, _, err := ovsdbconn.Dial(ctx, sbTarget, opts, dbModel)
	return c, err
}

// LoadLogicalSwitchFlows connects to the SB, reads the logical flows of
// every logical switch (datapath groups expanded) and disconnects.
func LoadLogicalSwitchFlows(ctx context.Context, opts ovsdbconn.Options) (*lflow.Listing, error) {
	c, err := Connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rctx, cancel := context.WithTimeout(ctx, max(6*opts.TimeoutOrDefault(), 60e9))
	defer cancel()
	if err := Monitor(rctx, c); err != nil {
		return nil, err
	}
	return LogicalSwitchFlows(c)
}
