package compile

import "github.com/aclc/aclc/lflow"

// buildNetworkFunction is build_network_function (26.03): the
// pre-network-function and network-function stages' fixed flows. (Its
// ls_in_l2_lkup flow is outside the ACL stages.)
func (g *global) buildNetworkFunction(od *datapath, b *builder) {
	if !g.r.nf {
		return
	}
	for _, st := range [2]lflow.Stage{lflow.InPreNF, lflow.OutPreNF} {
		b.add(st, 0, "1", "next;")
		b.add(st, 1, regbitNFEnabled+" == 1 && "+regbitNFOrigDir+" == 1", regNFID+" = 0; next;")
	}
	for _, st := range [2]lflow.Stage{lflow.InNF, lflow.OutNF} {
		b.add(st, 100, regbitNFEnabled+" == 1 && eth.mcast", "next;")
		b.add(st, 0, "1", "next;")
		b.add(st, 1, regbitNFEnabled+" == 1", g.dropAction)
	}
}
