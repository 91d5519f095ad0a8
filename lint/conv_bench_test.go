package lint

import (
	"testing"
	"time"

	"github.com/aclc/aclc/nbschema"
)

// BenchmarkConvert measures the conversion of the ACLs' matches into
// cubes alone (setOf: the per-ACL split, the port group terms and the
// per-switch products; toSet for shared instances, once each as Lint
// converts them) on the NB BenchmarkLintShape lints, every switch's
// instances once per run.
func BenchmarkConvert(b *testing.B) {
	s := shapeNB()
	l, err := newLinter(s)
	if err != nil {
		b.Fatal(err)
	}
	views := make([]*swView, 0, len(s.Switches))
	for _, id := range nbschema.SortedKeys(s.Switches) {
		v := l.view(id)
		for _, in := range append(v.own, v.shared...) {
			if e, err := l.parse(v, in.a); err == nil {
				in.e = e
			}
		}
		views = append(views, v)
	}
	var cpu time.Duration
	cubes, fcs := 0, 0
	for b.Loop() {
		l.as = newASCache()
		l.as.global = &l.globalRes
		for i := range l.splits {
			l.splits[i].Store(nil)
		}
		for _, v := range views {
			v.arena.recycle()
			v.dyn = nil
			for _, in := range v.own {
				in.set, in.hull = nil, nil
			}
		}
		done := map[*inst]bool{}
		cpu0 := cpuTime()
		cubes, fcs = 0, 0
		for _, v := range views {
			for _, in := range v.own {
				if s := l.setOf(v, in); s != nil {
					cubes += len(s.over)
					fcs += constraints(s.over)
				}
			}
			for _, in := range v.shared {
				if in.e != nil && !done[in] { // converted once, as Lint does (sharedPart.once)
					done[in] = true
					cv := &converter{d: l.dialect, r: v.res, as: l.as, cover: v.cover}
					cubes += len(cv.toSet(in.e.Root).over)
				}
			}
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(cubes), "cubes/op")
	b.ReportMetric(float64(fcs), "fcs/op")
}
