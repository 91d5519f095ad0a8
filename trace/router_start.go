package trace

import (
	"fmt"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
)

// routerOfPort returns the router whose port is name; nil when name is no
// router port.
func (t *Tracer) routerOfPort(name string) (*rtModel, error) {
	rs, err := t.routerSet()
	if err != nil {
		return nil, err
	}
	return rs.owner[name], nil
}

// routerNotTraced says why the tracer does not follow a packet into rt:
// the NB's release is not one whose router pipeline aclc verifies, or the
// router has what aclc does not compile; "" when it does.
func (t *Tracer) routerNotTraced(rt *rtModel) string {
	if !compile.CompilesRouters(t.snap.Release) {
		return fmt.Sprintf("router %s: aclc traces routers of OVN %s only, the NB is OVN %s's",
			rt.r.Name, compile.RouterReleaseNames(), t.snap.Release)
	}
	if len(rt.r.Unsupported) > 0 {
		return rt.r.Name + " " + rt.r.Unsupported[0].String()
	}
	return ""
}

// traceFromRouter traces a packet that enters router rt at its port
// inport, as `ovn-trace ROUTER 'inport == "LRP" && ...'` does: a packet
// from the switch or router beyond that port (the physical network behind
// a gateway port, a peer router), from the router's ingress table 0.
func (t *Tracer) traceFromRouter(rt *rtModel, inport, microflow string, opt Options) (*Result, error) {
	if opt.Datapath != "" && opt.Datapath != rt.r.Name && opt.Datapath != rt.r.UUID {
		return nil, inputErrorf("port %q is not on datapath %q", inport, opt.Datapath)
	}
	if opt.Outport != "" {
		return nil, inputErrorf("--outport: the trace starts at router port %q, which has no L2 lookup to override", inport)
	}
	m, err := parseMicroflow(t.dialect, microflow, rt.res)
	if err != nil {
		return nil, err
	}
	r, res, err := t.newRun(nil, rt, m, microflow, opt)
	if err != nil {
		return nil, err
	}
	res.Datapath = rt.r.Name
	root := &Node{}
	node := root.add(NodePipeline, fmt.Sprintf("ingress(dp=%q, inport=%q)", friendlyLR(t.snap.Routers[rt.r.UUID], rt.r.Name), shortenUUID(inport)))
	switch why := t.routerNotTraced(rt); {
	case why != "":
		r.stopNotTraced(node, why)
	case r.hop(node, Hop{Datapath: rt.r.Name, Type: "router", Inport: inport}):
		r.trace(m, lflow.Ingress, 0, node)
	}
	return r.finish(res, root), nil
}
