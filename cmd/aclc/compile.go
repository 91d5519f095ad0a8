package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/sbschema"
)

var compileOpts struct {
	format   string
	datapath string
	stages   []string
	strict   bool
	output   string
	sb       string
	chassis  chassisFlag
	cpuprof  string
	memprof  string
}

var compileCmd = &cobra.Command{
	Use:   "compile [FIXTURE]",
	Short: "Compile NB ACLs into the ACL-stage logical flows ovn-northd writes",
	Long: `compile reads the Northbound database from a YAML fixture (FIXTURE) or a
live NB (--nb, or OVN_NB_DB when no FIXTURE is given) and prints, for every
logical switch, the flows of the ACL-related stages exactly as the
ovn-northd of the NB's OVN release writes them, in 'ovn-sbctl lflow-list'
format (default) or JSON.

The version is --ovn-version (a series, 25.03, means its newest verified
version; or an exact version, 25.03.2), else a live NB's — NB_Global
options:northd_internal_version, which northd writes on every run, else
(no northd has run on the NB) its schema version's series, with a note on
stderr — or the fixture's ovn: key, else ` + release.Default().Name() + ` (the newest LTS).
'aclc releases' lists every version aclc vouches for; a patch newer than
the newest verified of its series, or an unknown series, is refused
naming the nearest supported versions. The stages are that version's ACL
stages ('aclc releases --acl-stages VERSION'; 26.03: ls_in_pre_acl ...
ls_in_network_function, ls_out_pre_acl ... ls_out_network_function; 23.03:
ls_in_pre_acl, ls_in_pre_lb, ls_in_pre_stateful, ls_in_acl_hint,
ls_in_acl, ls_in_acl_after_lb, ls_in_stateful and their ls_out_
counterparts).

The datapath UUID printed in each "Datapath:" header is the NB
Logical_Switch UUID (ovn-sbctl prints the SB Datapath_Binding UUID there).

What northd reads besides the NB: the ids it allocated in the SB ACL_ID
table for persist-established ACLs (25.03+), the features of the
chassis, and the port bindings and service monitors that make a network
function active (26.03+). Without --sb aclc allocates the ids 1, 2, ...
in ACL UUID order (northd's equal these up to a renaming) and assumes
every chassis feature and no bound port, as northd does with no chassis
(so from 26.09 no network function is active); --chassis-lacks names
features some chassis lack. With --sb it reads all of them from that
live SB, which must be the NB's release, and prints exactly what northd
wrote there.

Matches are copied verbatim, as northd does, even when invalid; problems
aclc detects are reported on stderr: empty matches, dangling $address_set
or @port_group references (per switch, as OVN resolves them), matches
the release's parser rejects, and reject ACLs whose match northd wraps into
an invalid flow ((reg0[10] == 1) && A || B). With --strict they make aclc exit 1 and print nothing.`,
	Example: `  aclc compile testdata/fixtures/seed-stateless.yaml
  aclc compile --nb unix:/var/run/ovn/ovnnb_db.sock --datapath sw0 --stage ls_in_acl_eval
  aclc compile --nb unix:/var/run/ovn/ovnnb_db.sock --sb unix:/var/run/ovn/ovnsb_db.sock
  aclc compile fixture.yaml --ovn-version 25.03 --chassis-lacks ovn-sample-with-registers
  aclc compile fixture.yaml --format json -o flows.json`,
	Args: cobra.MaximumNArgs(1),
	RunE: runCompile,
}

func init() {
	f := compileCmd.Flags()
	f.StringVar(&compileOpts.format, "format", "text", "output format: text (ovn-sbctl lflow-list) or json")
	f.StringVar(&compileOpts.datapath, "datapath", "", "only this logical switch (name or UUID)")
	f.StringSliceVar(&compileOpts.stages, "stage", nil, "only these stages, as the release names them (e.g. ls_in_acl_eval on 25.03+, ls_in_acl on 23.03; repeatable or comma-separated)")
	f.BoolVar(&compileOpts.strict, "strict", false, "exit 1, printing no flows, if any problem is found")
	f.StringVarP(&compileOpts.output, "output", "o", "-", "write the flows to this file (atomically) instead of stdout")
	f.StringVar(&compileOpts.sb, "sb", "", "read the ACL ids northd allocated (persist-established, 25.03+), the chassis features and the network functions' port bindings and monitors (26.03+) from this live SB (remote(s), comma-separated; it must be the NB's release)")
	f.StringVar(&compileOpts.cpuprof, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to FILE")
	f.StringVar(&compileOpts.memprof, "memprofile", "", "write a heap profile (pprof, allocations) at the end of the run to FILE")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	compileOpts.chassis.register(compileCmd)
	compileNB.register(compileCmd)
	compileNB.registerRelease(compileCmd)
	rootCmd.AddCommand(compileCmd)
}

var compileNB nbFlags

// loadSnapshot reads the NB from the fixture in args, or from the live NB.
// The release is --ovn-version when the command has it, else the live
// NB's or the fixture's own (Snapshot.Release; nil for a fixture that
// names none).
func loadSnapshot(cmd *cobra.Command, args []string, nb *nbFlags) (*nbschema.Snapshot, error) {
	return loadSnapshotWith(cmd, args, nb, nbschema.LiveHooks{})
}

// loadSnapshotWith is loadSnapshot calling hooks during a live read.
func loadSnapshotWith(cmd *cobra.Command, args []string, nb *nbFlags, hooks nbschema.LiveHooks) (*nbschema.Snapshot, error) {
	r, err := nb.release()
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		if cmd.Flags().Changed("nb") {
			return nil, withCode(2, errors.New("give either a FIXTURE or --nb, not both"))
		}
		return nbschema.LoadFixtureWith(args[0], nbschema.FixtureOptions{Release: r})
	}
	return nbschema.LoadLiveWith(cmd.Context(), nb.options(), hooks)
}

func runCompile(cmd *cobra.Command, args []string) error {
	stop, err := startProfiles(compileOpts.cpuprof, compileOpts.memprof)
	if err != nil {
		return err
	}
	defer stop()
	// A one-shot compile: collect only as the heap nears 128 MiB (peak
	// RSS ~140 MiB at 50k ACLs, a few cycles); a larger NB collects twice
	// as often as by default, which keeps its peak RSS low. GOGC or
	// GOMEMLIMIT, when set, win.
	var received atomic.Int64
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer gcBudget(128<<20, 50, received.Load, 5)()
	}
	if compileOpts.format != "text" && compileOpts.format != "json" {
		return withCode(2, fmt.Errorf("--format: want text or json, got %q", compileOpts.format))
	}
	// A live NB's matches are parsed while the rest of the reply is
	// decoded, on the core the decoder leaves idle.
	var pre *compile.MatchParser
	hooks := nbschema.LiveHooks{ACL: func(r *release.Release) func(*nbdb.ACL) {
		pre = compile.NewMatchParser(r)
		return pre.Add
	}, Received: &received}
	t0 := time.Now()
	phase := func(what string) { slog.Debug("compile: "+what, "since start", time.Since(t0)) }
	snap, err := loadSnapshotWith(cmd, args, &compileNB, hooks)
	phase("NB read")
	if pre != nil {
		defer pre.Wait()
	}
	if err != nil {
		return err
	}
	lay, ok := lflow.LayoutFor(snap.Release.Series())
	if !ok {
		return fmt.Errorf("no stage layout for OVN %s", snap.Release)
	}
	keep, err := stageFilter(compileOpts.stages, lay)
	if err != nil {
		return withCode(2, err)
	}
	if compileOpts.datapath != "" && !hasSwitch(snap, compileOpts.datapath) {
		return withCode(2, fmt.Errorf("--datapath: no logical switch named %q", compileOpts.datapath))
	}
	opts, err := compileTarget(cmd, snap)
	if err != nil {
		return err
	}
	// The match validation's preparation (the ACLs in order, the rest of
	// the parse) needs no flows: it runs beside the compile, on whatever
	// core the compile leaves idle. Both only read snap.
	checks := make(chan *compile.MatchCheck, 1)
	go func() { checks <- compile.PrepareMatches(snap, snap.Release, pre) }()
	res := compile.CompileWith(snap, opts)
	phase("compiled")
	problems := append(res.Problems, (<-checks).Validate(res.Flows)...)
	phase("matches validated")
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "aclc: %s: %s\n", severityWord(compileOpts.strict), p)
	}
	if compileOpts.strict && len(problems) > 0 {
		return exitSilently(1)
	}
	out := res.Flows
	if compileOpts.datapath != "" || keep != nil {
		out = out.Filter(compileOpts.datapath, keep)
	}
	write := func(w io.Writer) error {
		if compileOpts.format == "json" {
			return lflow.WriteJSON(w, out)
		}
		return lflow.WriteText(w, out)
	}
	var err2 error
	if compileOpts.output == "-" || compileOpts.output == "" {
		// Stream to stdout: buffering the whole listing (56 MB at 50k
		// ACLs) would add about 60 MB to the peak RSS.
		if compileOpts.format == "text" {
			err2 = writeText(os.Stdout, out)
		} else {
			w := bufio.NewWriterSize(os.Stdout, 1<<20)
			if err2 = write(w); err2 == nil {
				err2 = w.Flush()
			}
		}
	} else {
		var buf bytes.Buffer
		if err2 = write(&buf); err2 == nil {
			err2 = writeOutput(compileOpts.output, buf.Bytes())
		}
	}
	if err2 != nil {
		return err2
	}
	phase("written")
	return notExact(snap, res.Problems)
}

// notExact is exit code 3 when what northd writes is not decided by the NB
// (compile.KindNorthdUndecided): the flows printed are one of northd's
// possible outputs.
func notExact(snap *nbschema.Snapshot, ps []compile.Problem) error {
	if !compile.Undecided(ps) {
		return nil
	}
	var sws []string
	for _, p := range ps {
		if p.Kind == compile.KindNorthdUndecided {
			sws = append(sws, strconv.Quote(p.Datapath))
		}
	}
	return withCode(3, fmt.Errorf("not exact: OVN %s's northd may write other flows for switch %s than these, depending on its state (see the northd-undecided warnings)",
		snap.Release.Name(), strings.Join(slices.Compact(sws), ", ")))
}

// compileTarget is what to compile snap for: its release, the chassis
// features --chassis-lacks names, and with --sb the live SB's ACL ids and
// chassis features, after checking that the SB is the NB's release.
func compileTarget(cmd *cobra.Command, snap *nbschema.Snapshot) (compile.Options, error) {
	lacking, err := compileOpts.chassis.lackingFor(snap)
	if err != nil {
		return compile.Options{}, err
	}
	if !cmd.Flags().Changed("sb") {
		return compile.Options{Release: snap.Release, Lacking: lacking}, nil
	}
	sbo := sbOptions(compileOpts.sb, &compileNB)
	sb, err := sbschema.DetectRelease(cmd.Context(), sbo)
	if err != nil {
		return compile.Options{}, fmt.Errorf("--sb: %w", err)
	}
	if err := sb.Check(snap.Release); err != nil {
		if sb.Release != nil || compileNB.ovnVersion == "" {
			return compile.Options{}, fmt.Errorf("--sb: %w", err)
		}
		slog.Warn("--ovn-version overrides the SB's release", "sb", sb.Remote, "schema", sb.Schema, "using", snap.Release.Name())
	}
	opts, err := liveTarget(cmd.Context(), sbo, snap, snap.Release, lacking)
	if err != nil {
		return compile.Options{}, fmt.Errorf("--sb: %w", err)
	}
	warnMissingACLIDs(snap, opts)
	return opts, nil
}

func severityWord(strict bool) string {
	if strict {
		return "error"
	}
	return "warning"
}

func hasSwitch(s *nbschema.Snapshot, name string) bool {
	for id, ls := range s.Switches {
		if ls.Name == name || id == name {
			return true
		}
	}
	return false
}

// stageFilter turns --stage names, as release lay names its stages, into a
// flow predicate (nil: all stages).
func stageFilter(names []string, lay *lflow.Layout) (func(lflow.Flow) bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := map[lflow.Stage]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		st, ok := lay.StageByName(n)
		if !ok || !st.IsACLStage() {
			known := strings.ReplaceAll(lay.ACLStageNames(), "|", ", ")
			if other := lflow.OtherReleasesStage(n, lay); !ok && other != "" {
				return nil, fmt.Errorf("--stage: OVN %s has no stage %q (%s; OVN %s's ACL stages: %s)", lay.Series, n, other, lay.Series, known)
			}
			return nil, fmt.Errorf("--stage: unknown stage %q (OVN %s's ACL stages: %s)", n, lay.Series, known)
		}
		want[st.Kind()] = true
	}
	return func(f lflow.Flow) bool { return want[f.Stage.Kind()] }, nil
}

// writeOutput writes data to stdout ("-") or atomically to a file
// (temporary file in the same directory, then rename), so that a failed
// run never leaves a half-written file.
func writeOutput(path string, data []byte) error {
	if path == "-" || path == "" {
		_, err := os.Stdout.Write(data)
		return err
	}
	return atomicWrite(path, data)
}
