// Command fixturetxn prints the OVSDB transact request that writes a
// fixture into an NB of the given schema (internal/fixturetxn), for
// testdata/regen.sh, which applies it with the oracle's own ovsdb-client.
//
//	fixturetxn -schema ROOT/usr/share/ovn/ovn-nb.ovsschema FIXTURE.yaml
//	fixturetxn -schema ... -empty      # delete the rows a fixture writes
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/aclc/aclc/internal/fixturetxn"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

func main() {
	schemaFile := flag.String("schema", "", "the NB's .ovsschema file (required)")
	empty := flag.Bool("empty", false, "print the request that empties the NB instead")
	flag.Parse()
	if err := run(*schemaFile, *empty, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "fixturetxn:", err)
		os.Exit(1)
	}
}

func run(schemaFile string, empty bool, args []string) error {
	if schemaFile == "" || empty != (len(args) == 0) {
		return fmt.Errorf("usage: fixturetxn -schema FILE (-empty | FIXTURE.yaml)")
	}
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		return err
	}
	sc, err := fixturetxn.ParseSchema(b)
	if err != nil {
		return err
	}
	var ops []fixturetxn.Op
	if empty {
		ops = fixturetxn.Empty(sc)
	} else {
		// The newest release's reader (not the default, 26.03, which
		// refuses 26.09's inputs): the version's own ovsdb-server
		// decides what its schema can hold.
		all := release.All()
		snap, err := nbschema.LoadFixtureWith(args[0], nbschema.FixtureOptions{Release: all[len(all)-1], ReleaseFrom: "fixturetxn, the newest release"})
		if err != nil {
			return err
		}
		if ops, err = fixturetxn.Rows(sc, snap); err != nil {
			return err
		}
	}
	req, err := fixturetxn.Request("OVN_Northbound", ops)
	if err != nil {
		return err
	}
	_, err = fmt.Printf("%s\n", req)
	return err
}
