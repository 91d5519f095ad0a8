package reach

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/pset"
)

// BenchmarkDescribeParts measures what the parts' Match costs: on a
// generated NB of REACH_BENCH_N ACLs (required; bench/RESULTS-describe.md
// used 50,000; sized by
// nbgen.Scale) of each nbgen shape, every ordered pair of the
// first switch by name is reached without matches (Options.MatchTerms
// -1), then every part is described; the ratio is the describing time
// over the reaching time of the same pairs (one engine, its switch model
// built by a first untimed Reach).
func BenchmarkDescribeParts(b *testing.B) {
	// Unset, the suite's one-iteration run skips it (it describes every
	// part of every pair of a switch of each shape: minutes even at 100
	// ACLs here).
	n, err := strconv.Atoi(os.Getenv("REACH_BENCH_N"))
	if err != nil {
		b.Skip("set REACH_BENCH_N (bench/RESULTS-describe.md: 50000)")
	}
	for _, shape := range nbgen.Shapes {
		b.Run(string(shape), func(b *testing.B) {
			snap := nbgen.Generate(nbgen.Scale(n, shape))
			e, err := New(snap, compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows)
			if err != nil {
				b.Fatal(err)
			}
			ports := e.Ports()
			var sw string
			for name := range ports {
				if sw == "" || name < sw {
					sw = name
				}
			}
			var pairs [][2]string
			for _, from := range ports[sw] {
				for _, to := range ports[sw] {
					if from != to {
						pairs = append(pairs, [2]string{from, to})
					}
				}
			}
			if _, err := e.Reach(pairs[0][0], pairs[0][1], Options{MatchTerms: -1}); err != nil && !errors.As(err, new(*NotExactError)) {
				b.Fatal(err)
			}
			var reachT, descT time.Duration
			var parts, cut, unstated, nodesBefore, nodesAfter int
			var terms int64
			b.ResetTimer()
			for range b.N {
				reachT, descT, parts, cut, unstated, terms = 0, 0, 0, 0, 0, 0
				for _, pr := range pairs {
					t0 := time.Now()
					res, err := e.Reach(pr[0], pr[1], Options{MatchTerms: -1})
					reachT += time.Since(t0)
					if errors.As(err, new(*NotExactError)) {
						continue
					} else if err != nil {
						b.Fatal(err)
					}
					nodesBefore = res.Manager.NodeCount()
					t0 = time.Now()
					for _, part := range res.Parts {
						d, err := res.Manager.Describe(part.Set, res.Entering, pset.DescribeOptions{})
						parts++
						switch {
						case err != nil:
							unstated++
						case d.Truncated():
							cut++
						}
						terms += d.Terms
					}
					descT += time.Since(t0)
					nodesAfter = res.Manager.NodeCount()
				}
			}
			b.ReportMetric(float64(len(pairs)), "pairs")
			b.ReportMetric(float64(parts), "parts")
			b.ReportMetric(float64(descT.Nanoseconds())/float64(max(parts, 1)), "describe-ns/part")
			b.ReportMetric(descT.Seconds()/max(reachT.Seconds(), 1e-9), "describe/reach")
			b.ReportMetric(float64(terms)/float64(max(parts, 1)), "terms/part")
			b.ReportMetric(float64(cut), "cut")
			b.ReportMetric(float64(unstated), "unstated")
			b.Logf("%s: switch %s, %d pairs, %d parts (%d cut, %d no match can state): reach %v, describe %v; the manager grew %d -> %d nodes over the last pair's descriptions",
				shape, sw, len(pairs), parts, cut, unstated, reachT, descT, nodesBefore, nodesAfter)
		})
	}
}
