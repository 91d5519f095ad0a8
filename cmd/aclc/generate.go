package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

var (
	genParams  = nbgen.Default()
	genOutput  string
	genNB      nbFlags
	genReplace bool
)

var nbGenerateCmd = &cobra.Command{
	Use:   "generate",
	Short: "Generate a realistic NB (switches, port groups, address sets, ACLs) as a fixture or into a live NB",
	Long: `generate builds a deterministic, realistic Northbound database with the
nbgen generator: S switches of P ports each, G port groups each spanning a few
switches, A address sets of K addresses, and N ACLs written the way CMSs write
them (ovn-kubernetes network policies such as
  outport == @pg && ip4 && ip4.src == $as && tcp && tcp.dst == 443
and Neutron security groups such as
  inport == @pg && ip4 && ip4.dst == 10.0.0.0/24 && udp && 1000 <= udp.dst <= 2000),
a fraction F of them allow-stateless, the rest allow-related, allow, drop and
reject, some with log, meter and label.

--shape lays out the port groups: consecutive (each over --switches-per-pg
consecutive switches), cluster (ovn-kubernetes: port group "cluster" of
every port with the default-deny ACLs and --cluster-acls of the policies,
the others namespaces of pods on random switches) or random-span (issue
24's large cluster: the default-deny port group "cluster" of every port,
every other port group over 2-8 switches chosen at random, address sets
mixing pod IPs with /24s and outside addresses).

The fixture (docs/fixture-format.md) goes to -o FILE, or to stdout. With --nb
the NB is written into that live NB in one transaction instead (with
--replace, replacing what it holds). The same flags always give the same NB.`,
	Example: `  aclc nb generate --switches 200 --ports 10 --port-groups 500 --address-sets 1000 --addrs 10 --acls 10000 --stateless 0.2 -o nb10k.yaml
  aclc nb generate --acls 50000 --switches 500 --port-groups 2500 --address-sets 5000 --nb unix:/run/ovn/ovnnb_db.sock --replace
  aclc nb generate --shape random-span --acls 200000 --switches 2000 --port-groups 10000 --address-sets 20000 -o nb200k.yaml`,
	Args: exactArgs(0),
	RunE: runGenerate,
}

func init() {
	f := nbGenerateCmd.Flags()
	f.IntVar(&genParams.Switches, "switches", genParams.Switches, "S: logical switches")
	f.IntVar(&genParams.PortsPerSwitch, "ports", genParams.PortsPerSwitch, "P: ports per switch")
	f.IntVar(&genParams.PortGroups, "port-groups", genParams.PortGroups, "G: port groups")
	f.IntVar(&genParams.SwitchesPerPG, "switches-per-pg", 3, "switches each port group spans")
	f.IntVar(&genParams.AddressSets, "address-sets", genParams.AddressSets, "A: address sets")
	f.IntVar(&genParams.AddrsPerSet, "addrs", genParams.AddrsPerSet, "K: addresses per address set")
	f.IntVar(&genParams.ACLs, "acls", genParams.ACLs, "N: ACLs in all")
	f.Float64Var(&genParams.StatelessFrac, "stateless", genParams.StatelessFrac, "F: fraction of ACLs that are allow-stateless (0..1)")
	f.Float64Var(&genParams.SwitchACLFrac, "switch-acls", 0.1, "fraction of ACLs on switches rather than on port groups (0..1)")
	f.IntVar(&genParams.LoadBalancers, "load-balancers", genParams.LoadBalancers, "load balancers, each on one switch")
	f.StringVar((*string)(&genParams.Shape), "shape", string(nbgen.ShapeConsecutive), "port group layout: consecutive (each spans --switches-per-pg consecutive switches), cluster (ovn-kubernetes: one port group of every port with default-deny ACLs, the others namespaces over all switches) or random-span (a large cluster: the default-deny port group of every port, the others each over 2-8 random switches, address sets mixing pod IPs, /24s and outside addresses)")
	f.Float64Var(&genParams.ClusterACLFrac, "cluster-acls", 0.1, "with --shape cluster: fraction of the port-group ACLs on the cluster-wide port group (0..1)")
	f.BoolVar(&genParams.ClusterRouter, "cluster-router", false, "join every switch to one distributed router, ovn-kubernetes' ovn_cluster_router (router port rtos-SWITCH with the switch's .254/24, switch port stor-SWITCH)")
	f.Uint64Var(&genParams.Seed, "seed", genParams.Seed, "random seed")
	f.StringVarP(&genOutput, "output", "o", "", "write the fixture to FILE (atomically) instead of stdout")
	f.BoolVar(&genReplace, "replace", false, "with --nb: replace the NB's existing rows in the same transaction")
	genNB.register(nbGenerateCmd)
	nbCmd.AddCommand(nbGenerateCmd)
}

// checkGenParams rejects sizes the generator cannot honour.
func checkGenParams(p nbgen.Params) error {
	switch {
	case p.Switches < 0 || p.PortsPerSwitch < 0 || p.PortGroups < 0 || p.AddressSets < 0 ||
		p.AddrsPerSet < 0 || p.ACLs < 0 || p.LoadBalancers < 0 || p.SwitchesPerPG < 0:
		return errors.New("sizes must not be negative")
	case p.StatelessFrac < 0 || p.StatelessFrac > 1:
		return fmt.Errorf("--stateless: want a fraction in 0..1, got %v", p.StatelessFrac)
	case p.SwitchACLFrac < 0 || p.SwitchACLFrac > 1:
		return fmt.Errorf("--switch-acls: want a fraction in 0..1, got %v", p.SwitchACLFrac)
	case p.Shape != "" && !slices.Contains(nbgen.Shapes, p.Shape):
		return fmt.Errorf("--shape: want consecutive, cluster or random-span, got %q", p.Shape)
	case p.ClusterACLFrac < 0 || p.ClusterACLFrac > 1:
		return fmt.Errorf("--cluster-acls: want a fraction in 0..1, got %v", p.ClusterACLFrac)
	case p.ACLs > 0 && p.Switches == 0:
		return errors.New("--acls needs at least one switch")
	case p.Switches > 64000 || p.PortsPerSwitch > 250:
		return errors.New("at most 64000 switches of 250 ports (port addresses are 10.S/16.P)")
	}
	return nil
}

func runGenerate(cmd *cobra.Command, args []string) error {
	if err := checkGenParams(genParams); err != nil {
		return withCode(2, err)
	}
	toNB := genNB.set(cmd)
	if toNB && genOutput != "" {
		return withCode(2, errors.New("give either -o FILE or --nb, not both"))
	}
	if genReplace && !toNB {
		return withCode(2, errors.New("--replace needs --nb"))
	}
	snap := nbgen.Generate(genParams)
	if !toNB {
		var buf bytes.Buffer
		if err := nbschema.WriteFixture(&buf, snap); err != nil {
			return err
		}
		if genOutput == "" || genOutput == "-" {
			_, err := cmd.OutOrStdout().Write(buf.Bytes())
			return err
		}
		return atomicWrite(genOutput, buf.Bytes())
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	nb, err := nbschema.Connect(ctx, genNB.options())
	if err != nil {
		return err
	}
	defer nb.Close()
	if err := nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{Replace: genReplace}); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "generated into %s: %d switches, %d ports, %d port groups, %d address sets, %d ACLs\n",
		nb.Client.CurrentEndpoint(), len(snap.Switches), len(snap.Ports), len(snap.PortGroups),
		len(snap.AddressSets), len(snap.ACLs))
	return nil
}
