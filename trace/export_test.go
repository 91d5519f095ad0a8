package trace

import (
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/lflow"
)

// WithSvcMonitor is the tracer's resolver: r with $svc_monitor_mac.
func WithSvcMonitor(r expr.Resolver, mac string) expr.Resolver { return withSvcMonitor{r, mac} }

// ModelFlow is one flow the tracer executes on a switch, for the tests
// that check the model against northd's real flows.
type ModelFlow struct {
	Flow lflow.Flow
	// Origin is "compiled" or "modelled"; NotTraced marks a model flow
	// that ends the trace "not traced".
	Origin    string
	NotTraced bool
}

// SwitchModelFlows returns the flows the tracer executes on switch name
// for a packet whose outport the L2 lookup chooses; none for a switch
// no trace goes through (it ends "not traced" on entering it).
func SwitchModelFlows(t *Tracer, name string) ([]ModelFlow, error) {
	id, ok := t.findSwitch(name)
	if !ok {
		return nil, inputErrorf("unknown datapath %q", name)
	}
	dp, err := t.switchModel(id, "")
	if err != nil {
		return nil, err
	}
	if dp.unmodelled != "" {
		return nil, nil // every trace through it ends "not traced"
	}
	var out []ModelFlow
	for _, fs := range dp.tables {
		for _, tf := range fs {
			nt := strings.HasPrefix(tf.f.Actions, notModelledMark+"(")
			out = append(out, ModelFlow{Flow: tf.f, Origin: tf.origin, NotTraced: nt})
		}
	}
	return out, nil
}

// ShortenUUID is ovn-trace's shorten_uuid, for tests that read ovn-trace's
// datapath names.
var ShortenUUID = shortenUUID
