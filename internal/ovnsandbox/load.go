package ovnsandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// Load replaces the sandbox NB's contents with snap and waits until
// ovn-northd has written the SB for it. The NB is emptied in a first
// transaction: fixtures share UUIDs, and one transaction cannot delete a
// row and insert its UUID again. Northd catches up with the emptied NB
// before the new rows come: ovn-northd 26.03.1 aborts (an assertion in
// ods_assign_array_index) when one of its runs sees a logical switch
// deleted and one with the same UUID inserted.
func (s *Sandbox) Load(ctx context.Context, snap *nbschema.Snapshot) error {
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: s.NB})
	if err != nil {
		return err
	}
	defer nb.Close()
	if err := nbschema.Store(ctx, nb.Client, nbschema.NewSnapshot(), nbschema.StoreOptions{Replace: true}); err != nil {
		return fmt.Errorf("empty the NB: %w", err)
	}
	if s.northd != nil {
		if err := s.Sync(ctx); err != nil {
			return err
		}
	}
	if snap.Global == nil {
		// A fixture without NB_Global options must not inherit the previous
		// fixture's (default_acl_drop=true, say): store an empty row, as a
		// fixture with an empty `global:` does.
		cp := *snap
		cp.Global = &nbdb.NBGlobal{}
		snap = &cp
	}
	if err := nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{}); err != nil {
		return err
	}
	return s.Sync(ctx)
}

// ACLStageFlows returns the SB's flows of the stages aclc compiles, as
// `ovn-sbctl lflow-list` prints them.
func (s *Sandbox) ACLStageFlows(ctx context.Context) (*lflow.Listing, error) {
	out, err := s.SBCtl(ctx, "lflow-list")
	if err != nil {
		return nil, err
	}
	l, err := lflow.ParseText("ovn-sbctl lflow-list", strings.NewReader(out))
	if err != nil {
		return nil, err
	}
	return l.Filter("", func(f lflow.Flow) bool { return f.Stage.IsACLStage() }), nil
}
