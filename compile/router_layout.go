package compile

import (
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

// routerStageFacts are the router stages that came to a series by a
// backport: a version of the series has the stage when it has the fact.
var routerStageFacts = map[lflow.RouterStage]*release.Fact{
	lflow.LRInNetworkID:       release.RouterNetworkID,
	lflow.LRInECMPStatefulEgr: release.RouterECMPStatefulEgr,
}

// RouterLayout is release r's logical router pipelines: its series'
// router stages (lflow) less those r's facts say it lacks.
func RouterLayout(r *release.Release) *lflow.RouterLayout {
	l, ok := lflow.LayoutFor(r.Series())
	if !ok {
		panic("compile: no stage layout for OVN " + r.Name())
	}
	return l.Routers(r.Name(), func(k lflow.RouterStage) bool {
		f := routerStageFacts[k]
		return f == nil || r.Has(f)
	})
}
