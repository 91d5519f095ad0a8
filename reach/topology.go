package reach

import "github.com/aclc/aclc/nbschema"

// This file finds which switches logical routers join: a pair of ports
// on two switches has a path only through routers.

// joined returns, for each switch UUID, a representative of the set of
// switches logical routers join to it (transitively: switch ports of type
// router name a router's port in options:router-port; router ports with
// a peer join two routers). Two switches are joined when their
// representatives are equal. A router port that is disabled still
// counts: whether traffic crosses a router is not reach's question here.
func (e *Engine) joined() map[string]string {
	if e.join != nil {
		return e.join
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(a string) string {
		if parent[a] == "" || parent[a] == a {
			return a
		}
		r := find(parent[a])
		parent[a] = r
		return r
	}
	union := func(a, b string) {
		if ra, rb := find(a), find(b); ra != rb {
			if ra < rb {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	routerOf := map[string]string{} // LRP name → "lr:" + router UUID
	for _, id := range nbschema.SortedKeys(e.snap.Routers) {
		for _, p := range e.snap.Routers[id].Ports {
			if lrp := e.snap.RouterPorts[p]; lrp != nil {
				if _, seen := routerOf[lrp.Name]; !seen {
					routerOf[lrp.Name] = "lr:" + id
				}
			}
		}
	}
	for _, id := range nbschema.SortedKeys(e.snap.Routers) {
		for _, p := range e.snap.Routers[id].Ports {
			if lrp := e.snap.RouterPorts[p]; lrp != nil && lrp.Peer != nil {
				if r, ok := routerOf[*lrp.Peer]; ok {
					union("lr:"+id, r)
				}
			}
		}
	}
	for pid, lsp := range e.snap.Ports {
		sw := e.view.PortSwitch(pid)
		if sw == "" || lsp.Type != "router" {
			continue
		}
		if r, ok := routerOf[lsp.Options["router-port"]]; ok {
			union("ls:"+sw, r)
		}
	}
	e.join = map[string]string{}
	for id := range e.snap.Switches {
		e.join[id] = find("ls:" + id)
	}
	return e.join
}
