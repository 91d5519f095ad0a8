package nbview

import (
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// LportMirror is one lport mirror (release.LportMirror, 25.09+) of a
// switch port, as northd's join_mirror_ports sees it: the mirror, and the
// serving port northd creates on the port's switch to carry its copies,
// "mp-SWITCH-SINK" (ovn_mirror_port_name of the switch's SB datapath
// name, which is the NB switch's name, and the mirror's sink).
type LportMirror struct {
	Mirror  *nbdb.Mirror
	Serving string
}

// LportMirrors returns the lport mirrors of port lsp on switch sw, in
// the order of its mirror_rules column: those of type "lport" whose sink
// names an existing port (a switch or router port; northd creates no
// serving port, and so writes no flow, for a missing one). Nil on a
// release without lport mirrors.
func (v *View) LportMirrors(sw *nbdb.LogicalSwitch, lsp *nbdb.LogicalSwitchPort) []LportMirror {
	if len(lsp.MirrorRules) == 0 || !v.rel.Has(release.LportMirror) {
		return nil
	}
	var out []LportMirror
	for _, id := range lsp.MirrorRules {
		m := v.s.Mirrors[id]
		if m == nil || m.Type != nbdb.MirrorTypeLport {
			continue
		}
		if _, ok := v.portByName[m.Sink]; !ok && !v.lrpNames[m.Sink] {
			continue
		}
		out = append(out, LportMirror{Mirror: m, Serving: "mp-" + sw.Name + "-" + m.Sink})
	}
	return out
}
