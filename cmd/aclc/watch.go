package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/watch"
)

var watchOpts struct {
	snapshot     string
	deltas       string
	zones        string
	ovs          string
	flushBackend string
	netns        string
	metrics      string
	memoryLimit  int64
	readyFile    string
	chassis      chassisFlag
}

var watchNB nbFlags

var watchCmd = &cobra.Command{
	Use:   "watch",
	Short: "Follow a live NB and keep its ACL-stage flows (and conntrack zones) up to date incrementally",
	Long: `watch connects to the NB (several comma-separated remotes follow a clustered
NB across leader changes and dead members), compiles it once, and then
recompiles only what each NB change batch affects.

--snapshot FILE is written once the initial NB is compiled and replaced
atomically after every batch that changes flows, with exactly what
'aclc compile --nb' would print at that moment. --deltas FILE (or - for
stdout) gets one JSON line per batch: the NB rows changed and the flows
added and removed.

Zone flushes: when a switch stops needing conntrack (its last stateful ACL
or load balancer VIP is gone) or a port is deleted, the conntrack zones of
the ports concerned are flushed once each, after the new flows are out.
Zones come from --zones FILE (YAML, port: zone) or from ovn-controller's
ct-zone-* keys in the Open_vSwitch database at --ovs REMOTE.
--flush-backend netlink flushes through ctnetlink (in --netns NAME if
given), dry-run only logs, none disables flushes. See docs/watch.md.

As a daemon: watch starts whether or not the NB is up yet, and keeps
trying to reach it with backoff (250ms doubling up to 8s, one log line per
remote and attempt) — forever by default, as ovn-northd does, or until
--timeout. An NB it must not follow (another database, a version aclc
cannot vouch for) stops it at once. Once the initial NB is compiled and its
snapshot written it says it is ready: a "ready" log line, the
aclc_watch_ready metric, --ready-file FILE, and READY=1 to systemd when
NOTIFY_SOCKET is set (Type=notify). Losing the NB later never stops it: it
reconnects forever and resyncs. SIGTERM or SIGINT finishes the batch in
flight (its delta line, snapshot and zone flushes) and exits 0.

--chassis-lacks names chassis features some chassis lack, as for compile;
it does not apply while the NB sets options:ignore_chassis_features=true.`,
	Example: `  aclc watch --nb unix:/var/run/ovn/ovnnb_db.sock --snapshot /run/aclc/flows.txt
  aclc watch --nb tcp:10.0.0.1:6641,tcp:10.0.0.2:6641,tcp:10.0.0.3:6641 --deltas - \
      --ovs unix:/var/run/openvswitch/db.sock --metrics :9476`,
	Args: func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return withCode(2, fmt.Errorf("watch takes no arguments, got %q", args))
		}
		return nil
	},
	RunE: runWatch,
}

func init() {
	f := watchCmd.Flags()
	f.StringVar(&watchOpts.snapshot, "snapshot", "", "keep the full current flows (lflow-list format) in this file")
	f.StringVar(&watchOpts.deltas, "deltas", "", "append one JSON line per change batch to this file (- for stdout)")
	f.StringVar(&watchOpts.zones, "zones", "", "YAML file mapping logical switch port names to conntrack zones")
	f.StringVar(&watchOpts.ovs, "ovs", "", "Open_vSwitch database remote to read ovn-controller's ct-zone-* keys from")
	f.StringVar(&watchOpts.flushBackend, "flush-backend", "netlink", "how to flush zones: netlink, dry-run or none")
	f.StringVar(&watchOpts.netns, "netns", "", "flush conntrack in this network namespace (/run/netns/NAME)")
	f.StringVar(&watchOpts.metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics")
	f.Int64Var(&watchOpts.memoryLimit, "memory-limit", 200, "soft Go memory limit in MiB (0: none; the GOMEMLIMIT environment variable wins)")
	watchOpts.chassis.register(watchCmd)
	f.StringVar(&watchOpts.readyFile, "ready-file", "", "write this file once the initial NB is compiled and the snapshot written (removed on exit)")
	watchNB.register(watchCmd)
	watchNB.registerRelease(watchCmd)
	// A daemon waits for its NB: --timeout here bounds the wait at start,
	// and its default is to wait forever.
	to := f.Lookup("timeout")
	to.Usage = "give up if the NB cannot be reached within this long at start (0: keep trying forever); each attempt's steps take at most min(this, " + nbschema.DefaultTimeout.String() + ")"
	to.DefValue = "0s"
	watchNB.timeout = 0
	rootCmd.AddCommand(watchCmd)
}

func runWatch(cmd *cobra.Command, _ []string) error {
	if watchOpts.zones != "" && watchOpts.ovs != "" {
		return withCode(2, errors.New("give either --zones or --ovs, not both"))
	}
	if os.Getenv("GOMEMLIMIT") == "" && watchOpts.memoryLimit > 0 {
		// A long-running watcher should not keep twice its live heap
		// resident (GOGC=100): a soft limit makes the GC work harder
		// only when memory gets close to it.
		debug.SetMemoryLimit(watchOpts.memoryLimit << 20)
	}
	if os.Getenv("GOGC") == "" {
		// Between batches the live heap is the engine and the cache
		// (118 MiB at 50k ACLs): at GOGC=100 a long run would let it
		// double up to the soft limit before collecting. 50 keeps the
		// heap within 1.5 times the live one (about 190 MiB resident at
		// 50k); a one-ACL batch allocates ~30 KB, so the GC still runs
		// only every few thousand batches.
		debug.SetGCPercent(50)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The watcher reports what it does (batches, flushes) at info level.
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if _, err := watchNB.release(); err != nil {
		return err
	}
	lacking, err := watchOpts.chassis.lacking()
	if err != nil {
		return err
	}
	if watchNB.timeout < 0 {
		return withCode(2, fmt.Errorf("--timeout: want a duration ≥ 0, got %v", watchNB.timeout))
	}
	cfg := watch.Config{NB: watchNB.options(), Log: log, Lacking: lacking,
		ConnectTimeout: watchNB.timeout, ReadyFile: watchOpts.readyFile}
	cfg.NB.Timeout = min(watchNB.timeout, nbschema.DefaultTimeout)
	if watchOpts.readyFile != "" {
		if err := checkWritableDir(watchOpts.readyFile); err != nil {
			return withCode(2, fmt.Errorf("--ready-file: %w", err))
		}
	}
	if watchOpts.snapshot != "" {
		path := watchOpts.snapshot
		cfg.WriteSnapshot = func(write func(io.Writer) error) error { return atomicWriteWith(path, write) }
	}
	switch watchOpts.deltas {
	case "":
	case "-":
		cfg.Deltas = os.Stdout
	default:
		f, err := os.OpenFile(watchOpts.deltas, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return withCode(2, fmt.Errorf("--deltas: %w", err))
		}
		defer f.Close()
		cfg.Deltas = f
	}
	cfg.Zones, cfg.Flusher, err = watchZones(ctx, log)
	if err != nil {
		return err
	}
	if c, ok := cfg.Zones.(io.Closer); ok {
		defer c.Close()
	}
	if watchOpts.metrics != "" {
		cfg.Metrics = watch.NewMetrics()
		addr, err := cfg.Metrics.Serve(ctx, watchOpts.metrics)
		if err != nil {
			return withCode(2, fmt.Errorf("--metrics: %w", err))
		}
		log.Info("serving metrics", "url", "http://"+addr+"/metrics")
	}
	return watch.Run(ctx, cfg)
}

// watchZones builds the zone source and flush backend the flags ask for.
func watchZones(ctx context.Context, log *slog.Logger) (watch.ZoneSource, watch.Flusher, error) {
	var flusher watch.Flusher
	switch watchOpts.flushBackend {
	case "netlink":
		flusher = &watch.NetlinkFlusher{NetNS: watchOpts.netns}
	case "dry-run":
		flusher = watch.DryRunFlusher{Log: log}
	case "none":
	default:
		return nil, nil, withCode(2, fmt.Errorf("--flush-backend: want netlink, dry-run or none, got %q", watchOpts.flushBackend))
	}
	var zones watch.ZoneSource
	switch {
	case watchOpts.zones != "":
		z, err := watch.NewFileZones(watchOpts.zones)
		if err != nil {
			return nil, nil, withCode(2, err)
		}
		zones = z
	case watchOpts.ovs != "":
		z, err := watch.NewOVSZones(ctx, watchOpts.ovs, log)
		if err != nil {
			return nil, nil, err
		}
		zones = z
	}
	if zones == nil || flusher == nil {
		if flusher != nil {
			log.Info("no --zones or --ovs: conntrack zones will not be flushed")
		}
		return nil, nil, nil
	}
	return zones, flusher, nil
}
