package compile

import "github.com/aclc/aclc/release"

// Register bits and fields of the ACL stages that appeared after 23.03
// (northd.c's REGBIT_*/REG_* at v25.03.0 and v26.03.1).
const (
	regbitIPFrag          = "reg0[19]"
	regbitACLPersistID    = "reg0[20]"
	regbitHintAllowPersis = "reg0[21]"
	regACLID              = "reg2[16..31]"

	regbitVerdictAllow  = "reg8[16]"
	regbitVerdictDrop   = "reg8[17]"
	regbitVerdictReject = "reg8[18]"
	regbitACLObsStage   = "reg8[19..20]"
	regACLTier          = "reg8[30..31]"

	regObsPointIDNew     = "reg3"
	regObsPointIDEst     = "reg9"
	regObsCollectorIDNew = "reg8[0..7]"
	regObsCollectorIDEst = "reg8[8..15]"

	regbitNFEnabled = "reg8[21]"
	regbitNFOrigDir = "reg8[22]"
	regNFGroupID    = "reg0[22..29]"
	regNFID         = "reg0[22..29]"
)

// registers are the fields whose register moved between releases.
type registers struct {
	lbIPv4, lbIPv6, lbPort string // REG_ORIG_DIP_* / REG_LB_*: the original destination
}

var (
	registers2303 = registers{lbIPv4: "reg1", lbIPv6: "xxreg1", lbPort: "reg2[0..15]"}
	registers2503 = registers{lbIPv4: "reg4", lbIPv6: "xxreg1", lbPort: "reg2[0..15]"}
)

// LBOrigDest returns the registers in which release r's northd keeps the
// original destination of a load balanced packet (REG_ORIG_DIP_IPV4,
// REG_ORIG_DIP_IPV6, REG_ORIG_TP_DPORT), for trace's ls_in_lb model.
func LBOrigDest(r *release.Release) (ipv4, ipv6, port string) {
	regs := newRules(r).regs
	return regs.lbIPv4, regs.lbIPv6, regs.lbPort
}
