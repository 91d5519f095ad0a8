package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/sbschema"
)

// What compile --sb and verify read of the live SB besides its flows: the
// ACL ids northd allocated, the chassis features northd goes by, and the
// port bindings and service monitors that decide a network function
// group's active function.

// sbOptions are the connection options of the SB at remote (empty:
// $OVN_SB_DB, else the default), with the NB flags' TLS files, timeout and
// leader setting.
func sbOptions(remote string, nb *nbFlags) ovsdbconn.Options {
	o := nb.options()
	return ovsdbconn.Options{Remotes: remote, PrivateKey: o.PrivateKey, Certificate: o.Certificate,
		CACert: o.CACert, Timeout: o.Timeout, NoLeaderOnly: o.NoLeaderOnly}
}

// liveTarget reads from the SB what northd of release r compiled snap
// with: the ids of the persist-established ACLs (25.03+), the port
// bindings and network function monitors (26.03+: which function of a
// group is active) and the chassis features some chassis lack. lacking are the features the user said are
// lacking (--chassis-lacks); the SB's chassis add to them, unless the NB
// says ignore_chassis_features.
func liveTarget(ctx context.Context, sbo ovsdbconn.Options, snap *nbschema.Snapshot, r *release.Release, lacking compile.ChassisFeatures) (compile.Options, error) {
	opts := compile.Options{Release: r, Lacking: lacking}
	if r.Has(release.PersistEstablished) {
		ids, err := sbschema.LoadACLIDs(ctx, sbo)
		if err != nil {
			return opts, err
		}
		opts.ACLIDs = ids
	}
	if r.Has(release.NetworkFunction) {
		st, err := sbschema.LoadNFState(ctx, sbo)
		if err != nil {
			return opts, err
		}
		opts.SB = &compile.SBState{Ports: make(map[string]compile.PortBinding, len(st.Ports)), NFMonitorOnline: st.MonitorOnline}
		for name, pb := range st.Ports {
			opts.SB.Ports[name] = compile.PortBinding{Chassis: pb.Chassis, Up: pb.Up}
		}
	}
	if compile.IgnoresChassisFeatures(snap) {
		return opts, nil
	}
	have, err := sbschema.LoadChassisFeatures(ctx, sbo, chassisFeatureNames())
	if err != nil {
		return opts, err
	}
	for _, cf := range chassisFeatures {
		if !have[cf.name] {
			cf.set(&opts.Lacking)
		}
	}
	return opts, nil
}

// warnMissingACLIDs warns about persist-established ACLs that the SB's
// ACL_ID table has no id for: northd compiles them without one too, but
// usually it has not caught up with the NB yet.
func warnMissingACLIDs(snap *nbschema.Snapshot, opts compile.Options) {
	if opts.ACLIDs == nil || opts.Lacking.CTLabelFlush {
		return
	}
	var missing []string
	for id := range compile.AllocateACLIDs(snap) {
		if _, ok := opts.ACLIDs[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		slog.Warn("the SB ACL_ID table has no id for these persist-established ACLs (northd compiles them without one, as printed; is it behind the NB?)",
			"acls", strings.Join(missing, ","))
	}
}

// chassisFeature is a chassis feature the ACL stages depend on, by the
// name a chassis announces it with in SB Chassis other_config
// (include/ovn/features.h).
type chassisFeature struct {
	name  string
	what  string
	since string // the release whose northd reads it for the ACL stages
	set   func(*compile.ChassisFeatures)
}

var chassisFeatures = []chassisFeature{
	{"ct-label-flush", "persist-established is ignored (no ACL id is loaded)", "25.03",
		func(c *compile.ChassisFeatures) { c.CTLabelFlush = true }},
	{"ovn-sample-with-registers", "a sample with one collector gets per-ACL sample flows, like one with several", "24.09",
		func(c *compile.ChassisFeatures) { c.SampleWithReg = true }},
}

func chassisFeatureNames() []string {
	var out []string
	for _, cf := range chassisFeatures {
		out = append(out, cf.name)
	}
	return out
}

// chassisFlag is --chassis-lacks.
type chassisFlag struct{ names []string }

func (f *chassisFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&f.names, "chassis-lacks", nil,
		"compile as northd does when some chassis lack these features ("+strings.Join(chassisFeatureNames(), ", ")+
			"; default: none lacking, as northd assumes with no chassis)")
}

// lacking parses the flag; an unknown name is a usage error naming it.
func (f *chassisFlag) lacking() (compile.ChassisFeatures, error) {
	var c compile.ChassisFeatures
	for _, n := range f.names {
		n = strings.TrimSpace(n)
		i := slices.IndexFunc(chassisFeatures, func(cf chassisFeature) bool { return cf.name == n })
		if i < 0 {
			return c, withCode(2, fmt.Errorf("--chassis-lacks: unknown chassis feature %q (the ACL stages depend on: %s)", n, strings.Join(chassisFeatureNames(), ", ")))
		}
		chassisFeatures[i].set(&c)
	}
	return c, nil
}

// lackingFor is the flag's features for compiling snap: none when the NB
// tells northd to ignore the chassis (with a warning when some were given).
func (f *chassisFlag) lackingFor(snap *nbschema.Snapshot) (compile.ChassisFeatures, error) {
	c, err := f.lacking()
	if err != nil || !compile.IgnoresChassisFeatures(snap) {
		return c, err
	}
	if c != (compile.ChassisFeatures{}) {
		slog.Warn("--chassis-lacks has no effect: the NB sets NB_Global options:ignore_chassis_features=true, so northd enables every chassis feature")
	}
	return compile.ChassisFeatures{}, nil
}
