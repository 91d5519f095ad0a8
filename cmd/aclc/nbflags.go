package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// nbFlags are the flags that say how to reach a live NB, shared by every
// command that reads or writes one (nb load, nb dump, compile --nb, ...).
type nbFlags struct {
	remote      string
	privateKey  string
	certificate string
	caCert      string
	timeout     time.Duration
	noLeader    bool
	ovnVersion  string // --ovn-version, where registerRelease added it
}

// register adds --nb, -p/--private-key, -c/--certificate, -C/--ca-cert and
// --timeout to cmd.
func (f *nbFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.remote, "nb", "", "NB remote(s), comma-separated: unix:PATH, tcp:IP:PORT, ssl:IP:PORT (default $OVN_NB_DB, else "+nbschema.DefaultRemote+")")
	fl.StringVarP(&f.privateKey, "private-key", "p", "", "private key PEM file for ssl: remotes")
	fl.StringVarP(&f.certificate, "certificate", "c", "", "certificate PEM file for ssl: remotes")
	fl.StringVarP(&f.caCert, "ca-cert", "C", "", "CA certificate PEM file for ssl: remotes")
	fl.DurationVar(&f.timeout, "timeout", nbschema.DefaultTimeout, "give up connecting to the NB after this long")
	fl.BoolVar(&f.noLeader, "no-leader-only", false, "with a clustered NB, also read from a follower (default: the leader only, as ovn-nbctl)")
}

// registerRelease adds --ovn-version to cmd: the OVN release to read the
// NB or fixture as, over a live NB's detected release (with a warning when
// they differ) and a fixture's ovn: key.
func (f *nbFlags) registerRelease(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.ovnVersion, "ovn-version", "", "OVN version to read the NB or fixture as: a series ("+releaseNames()+": its newest verified version) or an exact version (aclc releases); default: the NB's own (NB_Global options:northd_internal_version, else its schema's series) or the fixture's ovn: key, else "+release.Default().Name())
}

// release returns the --ovn-version release, nil when not given, or a
// usage error.
func (f *nbFlags) release() (*release.Release, error) {
	if f.ovnVersion == "" {
		return nil, nil
	}
	r, err := release.Lookup(f.ovnVersion)
	if err != nil {
		return nil, withCode(2, fmt.Errorf("--ovn-version: %w", err))
	}
	return r, nil
}

// releaseNames lists the supported series, for help texts.
func releaseNames() string {
	var names []string
	for _, b := range release.Branches() {
		if len(release.OnBranch(b.Series)) > 0 {
			names = append(names, b.Series.String())
		}
	}
	return strings.Join(names, ", ")
}

// options returns the nbschema connection options the flags describe.
func (f *nbFlags) options() nbschema.Options {
	r, _ := f.release() // commands check it first (release)
	return nbschema.Options{
		Release:      r,
		Remotes:      f.remote,
		PrivateKey:   f.privateKey,
		Certificate:  f.certificate,
		CACert:       f.caCert,
		Timeout:      f.timeout,
		NoLeaderOnly: f.noLeader,
	}
}

// set reports whether any NB flag was given on the command line, so that a
// command can refuse both a fixture and --nb.
func (f *nbFlags) set(cmd *cobra.Command) bool {
	for _, name := range []string{"nb", "private-key", "certificate", "ca-cert", "timeout", "no-leader-only"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return true
		}
	}
	return false
}
