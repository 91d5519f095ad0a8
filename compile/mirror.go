package compile

import (
	"strconv"

	"github.com/aclc/aclc/lflow"
)

// buildMirror is the ACL-stage part of build_mirror_lflows (25.09+): for
// every lport mirror of a port of the switch, traffic to the mirror's
// serving port skips conntrack and every ACL, straight from
// ls_out_pre_acl to ls_out_apply_port_sec (priority 65535, one flow per
// serving port however many ports and directions mirror to it). The
// mirror stages' own flows (ls_in_mirror, ls_out_mirror) are outside the
// ACL stages.
func (g *global) buildMirror(od *datapath, b *builder) {
	if !g.r.lportMirror {
		return
	}
	seen := map[string]bool{}
	for _, p := range od.LS.Ports {
		lsp, ok := g.s.Ports[p]
		if !ok {
			continue
		}
		for _, m := range g.v.LportMirrors(od.LS, lsp) {
			if seen[m.Serving] {
				continue
			}
			seen[m.Serving] = true
			b.add(lflow.OutPreACL, 65535, "outport == "+strconv.Quote(m.Serving),
				"next(pipeline=egress, table="+strconv.Itoa(b.lay.Stage(lflow.OutApplyPortSec).Table())+");")
		}
	}
}
