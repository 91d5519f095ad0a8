// Package sbschema reads the logical flows of logical switches from a live
// OVN Southbound database, with datapath groups expanded, for comparison
// with what aclc compiles (aclc verify). The row types are the libovsdb
// models generated into sbschema/sbdb.
package sbschema

import (
	"context"
	"fmt"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/sbschema/sbdb"
)

// monitorOptions are the SB tables and columns aclc reads.
func monitorOptions() []client.MonitorOption {
	lf := &sbdb.LogicalFlow{}
	grp := &sbdb.LogicalDPGroup{}
	dp := &sbdb.DatapathBinding{}
	return []client.MonitorOption{
		client.WithTable(lf, &lf.LogicalDatapath, &lf.LogicalDpGroup, &lf.Pipeline, &lf.TableID,
			&lf.Priority, &lf.Match, &lf.Actions, &lf.ExternalIDs),
		client.WithTable(grp, &grp.Datapaths),
		client.WithTable(dp, &dp.ExternalIDs),
	}
}

// Monitor starts monitoring the tables LogicalSwitchFlows reads.
func Monitor(ctx context.Context, c client.Client) error {
	if _, err := c.Monitor(ctx, c.NewMonitor(monitorOptions()...)); err != nil {
		return fmt.Errorf("monitor SB Logical_Flow: %w", err)
	}
	return nil
}

// LogicalSwitchFlows returns, from c's cache, every logical flow of every
// logical switch datapath, expanded over datapath groups. Each Datapath is
// named by the SB external_ids:name (and name2) and identified by the NB
// Logical_Switch UUID it stands for (external_ids:logical-switch), as aclc
// prints it. Flows of stages unknown to aclc are an error; router
// datapaths are skipped.
func LogicalSwitchFlows(c client.Client) (*lflow.Listing, error) {
	var dps []sbdb.DatapathBinding
	if err := c.List(context.Background(), &dps); err != nil {
		return nil, fmt.Errorf("SB Datapath_Binding: %w", err)
	}
	byUUID := map[string]*lflow.Datapath{}
	l := &lflow.Listing{}
	for _, dp := range dps {
		ls, ok := dp.ExternalIDs["logical-switch"]
		if !ok {
			continue
		}
		d := &lflow.Datapath{Name: dp.ExternalIDs["name"], Name2: dp.ExternalIDs["name2"], UUID: ls}
		byUUID[dp.UUID] = d
		l.Datapaths = append(l.Datapaths, d)
	}
	var groups []sbdb.LogicalDPGroup
	if err := c.List(context.Background(), &groups); err != nil {
		return nil, fmt.Errorf("SB Logical_DP_Group: %w", err)
	}
	groupDPs := make(map[string][]string, len(groups))
	for _, g := range groups {
		groupDPs[g.UUID] = g.Datapaths
	}
	var flows []sbdb.LogicalFlow
	if err := c.List(context.Background(), &flows); err != nil {
		return nil, fmt.Errorf("SB Logical_Flow: %w", err)
	}
	// The SB's release is the one whose layout every switch flow's
	// stage-name and table fit.
	fit := lflow.NewLayoutFit(nil)
	for _, f := range flows {
		var targets []string
		if f.LogicalDatapath != nil {
			targets = append(targets, *f.LogicalDatapath)
		}
		if f.LogicalDpGroup != nil {
			targets = append(targets, groupDPs[*f.LogicalDpGroup]...)
		}
		var st lflow.Stage
		resolved := false
		for _, dpID := range targets {
			d, ok := byUUID[dpID]
			if !ok {
				continue // a router datapath
			}
			if !resolved {
				pipe := lflow.Ingress
				if f.Pipeline == sbdb.LogicalFlowPipelineEgress {
					pipe = lflow.Egress
				}
				name := f.ExternalIDs["stage-name"]
				if name == "" {
					return nil, fmt.Errorf("SB Logical_Flow %s: no external_ids:stage-name (%s table %d)", f.UUID, f.Pipeline, f.TableID)
				}
				s, err := fit.Add(name, pipe, f.TableID)
				if err != nil {
					return nil, fmt.Errorf("SB Logical_Flow %s: %v", f.UUID, err)
				}
				st, resolved = s, true
			}
			d.Flows = append(d.Flows, lflow.Flow{Stage: st, Priority: f.Priority, Match: f.Match, Actions: f.Actions, Source: f.UUID})
		}
	}
	fit.Place(l)
	l.Sort()
	return l, nil
}
