package trace

import (
	"fmt"
	"strings"
)

// CTState is a set of conntrack state flags, with OVS's bit assignment
// (CS_NEW is bit 0 ... CS_DST_NAT is bit 7), the value of the ct_state
// field the logical flows match on.
type CTState uint32

// The conntrack state flags, in the order OVS prints them.
const (
	CTNew CTState = 1 << iota
	CTEst
	CTRel
	CTRpl
	CTInv
	CTTrk
	CTSNAT
	CTDNAT
)

var ctFlagNames = []string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}

// DefaultCTState is the state ovn-trace uses for a conntrack recirculation
// once the --ct values are used up: est|trk.
const DefaultCTState = CTEst | CTTrk

// ParseCTState parses one --ct value the way ovn-trace does: flag names
// separated by commas ("new", "est,rpl", "trk,new"), trk always implied.
// An unknown flag is an error worded as ovn-trace words it.
func ParseCTState(s string) (CTState, error) {
	st := CTTrk
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		found := false
		for i, n := range ctFlagNames {
			if f == n {
				st |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("%s: unknown connection tracking state flag (want a comma-separated list of %s)",
				s, strings.Join(ctFlagNames, ", "))
		}
	}
	return st, nil
}

// Validate returns a warning for a state conntrack can never produce (OVS
// validate_ct_state), or "" if the state is plausible.
func (s CTState) Validate() string {
	switch {
	case s&CTNew != 0 && s&CTEst != 0:
		return fmt.Sprintf("%s: invalid connection state: \"new\" and \"est\" are mutually exclusive", s)
	case s&CTNew != 0 && s&CTRpl != 0:
		return fmt.Sprintf("%s: invalid connection state: \"new\" and \"rpl\" are mutually exclusive", s)
	case s&CTInv != 0 && s&(CTNew|CTEst|CTRel|CTRpl) != 0:
		return fmt.Sprintf("%s: invalid connection state: \"inv\" excludes \"new\", \"est\", \"rel\" and \"rpl\"", s)
	}
	return ""
}

// String prints s as ovn-trace does: "new|trk", "est|rpl|trk".
func (s CTState) String() string {
	var parts []string
	for i, n := range ctFlagNames {
		if s&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}
