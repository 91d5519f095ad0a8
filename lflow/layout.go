package lflow

import (
	"fmt"
	"strings"
)

// Layout is one OVN release's logical switch pipelines: which stages it
// has, their names and their table numbers (northd.h's PIPELINE_STAGES).
// Each supported release has one, listed in layouts; adding a release is
// adding its stage list here.
type Layout struct {
	// Series is the OVN release series the layout is of ("26.03").
	Series string
	id     uint8
	info   [numKinds]stageInfo
	byName map[string]Stage
	// byTable[pipeline][table]
	byTable [2][]Stage
	// routers are the series' router stages (its newest version's; see
	// Routers).
	routers []RouterStage
}

type stageInfo struct {
	name  string
	table int // -1: the release has no such stage
	acl   bool
}

// stageDef is one PIPELINE_STAGE line: the kind and the stage's name.
// Tables are numbered in list order within each pipeline.
type stageDef struct {
	kind Stage
	name string
}

func newLayout(id uint8, series string, defs []stageDef, routers []RouterStage) *Layout {
	for i := 1; i < len(routers); i++ {
		if routers[i] <= routers[i-1] {
			panic(fmt.Sprintf("lflow: layout %s: %s out of kind order", series, routers[i]))
		}
	}
	l := &Layout{Series: series, id: id, byName: map[string]Stage{}, routers: routers}
	for k := range l.info {
		l.info[k].table = -1
	}
	next := [2]int{}
	prev := Stage(0)
	for i, d := range defs {
		if i > 0 && d.kind <= prev {
			panic(fmt.Sprintf("lflow: layout %s: %s out of kind order", series, d.name))
		}
		prev = d.kind
		p := kindPipeline(d.kind)
		st := Stage(id)<<8 | d.kind
		l.info[d.kind] = stageInfo{name: d.name, table: next[p]}
		l.byName[d.name] = st
		l.byTable[p] = append(l.byTable[p], st)
		next[p]++
	}
	for _, k := range aclKinds {
		if l.info[k].table >= 0 {
			l.info[k].acl = true
		}
	}
	return l
}

// Stage returns kind k placed in l. k must be a kind l has (Has).
func (l *Layout) Stage(k Stage) Stage {
	k = k.Kind()
	if l.info[k].table < 0 {
		panic(fmt.Sprintf("lflow: OVN %s has no stage of kind %d", l.Series, k))
	}
	return Stage(l.id)<<8 | k
}

// Has reports whether the release has a stage of kind k.
func (l *Layout) Has(k Stage) bool { return k.Kind() < numKinds && l.info[k.Kind()].table >= 0 }

// StageByName returns the stage of l with the given name.
func (l *Layout) StageByName(name string) (Stage, bool) {
	s, ok := l.byName[name]
	return s, ok
}

// StageAt returns the stage at table in pipeline p.
func (l *Layout) StageAt(p Pipeline, table int) (Stage, bool) {
	if table < 0 || table >= len(l.byTable[p]) {
		return 0, false
	}
	return l.byTable[p][table], true
}

// Stages returns every stage of l in pipeline order.
func (l *Layout) Stages() []Stage {
	return append(append([]Stage(nil), l.byTable[Ingress]...), l.byTable[Egress]...)
}

// ACLStages returns the stages of l that aclc compiles, in pipeline order.
func (l *Layout) ACLStages() []Stage {
	var out []Stage
	for _, s := range l.Stages() {
		if s.IsACLStage() {
			out = append(out, s)
		}
	}
	return out
}

// ACLStageNames returns the names of ACLStages, "|"-separated.
func (l *Layout) ACLStageNames() string {
	var names []string
	for _, s := range l.ACLStages() {
		names = append(names, s.Name())
	}
	return strings.Join(names, "|")
}

// String is the series.
func (l *Layout) String() string { return l.Series }

// LayoutFor returns the layout of an OVN release series ("26.03").
func LayoutFor(series string) (*Layout, bool) {
	for _, l := range layouts {
		if l.Series == series {
			return l, true
		}
	}
	return nil, false
}

// Layouts returns every known layout, oldest release first.
func Layouts() []*Layout { return append([]*Layout(nil), layouts...) }

// OtherReleasesStage says, for a stage name that l lacks, which releases
// have it and what l calls that stage ("ls_in_acl is OVN 23.03's name of
// ls_in_acl_eval"), or "" when no release has a stage of that name.
func OtherReleasesStage(name string, l *Layout) string {
	for _, o := range layouts {
		st, ok := o.StageByName(name)
		if !ok || o == l {
			continue
		}
		if l.Has(st.Kind()) {
			return fmt.Sprintf("%s is OVN %s's name of %s", name, o.Series, l.Stage(st.Kind()).Name())
		}
		return fmt.Sprintf("%s is a stage of OVN %s", name, o.Series)
	}
	return ""
}
