package lint

// ruleCases pins the findings of each rule's fixture in testdata/. Every
// fixture shows its rule firing and, where it makes sense, a variant that
// must not fire.
var ruleCases = []struct {
	fixture string
	want    []got
}{
	{"contradiction.yaml", []got{
		{Rule: "contradiction", Severity: "warning", ACLs: []string{"dns"}, Switches: []string{"sw0"}, Offset: 7},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"dns"}, Switches: []string{"sw0"}, Offset: 7},
	}},
	{"dangling-ref.yaml", []got{
		{Rule: "dangling-ref", Severity: "error", ACLs: []string{"missing-as"}, Switches: []string(nil), Offset: 11},
		{Rule: "dangling-ref", Severity: "error", ACLs: []string{"missing-pg"}, Switches: []string{"sw-web"}, Offset: 10},
		{Rule: "dangling-ref", Severity: "error", ACLs: []string{"pg-elsewhere"}, Switches: []string{"sw-web"}, Offset: 11},
	}},
	{"default-drop-after-lb.yaml", []got{
		{Rule: "default-drop-after-lb", Severity: "error", ACLs: []string{"allow-tcp"}, Switches: []string{"sw-broken"}, Offset: -1},
		{Rule: "default-drop-after-lb", Severity: "warning", ACLs: []string{"allow-ip4"}, Switches: []string{"sw-partial"}, Offset: -1},
	}},
	{"empty-set.yaml", []got{
		{Rule: "empty-set", Severity: "warning", ACLs: []string{"allow-from-empty"}, Switches: []string{"sw0"}, Offset: 11},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"allow-from-empty"}, Switches: []string{"sw0"}, Offset: 0},
	}},
	{"host-bits.yaml", []got{
		{Rule: "host-bits", Severity: "warning", ACLs: []string{"subnet"}, Switches: []string{"sw0"}, Offset: 11},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"subnet"}, Switches: []string{"sw0"}, Offset: 0},
	}},
	{"invalid-match.yaml", []got{
		{Rule: "invalid-match", Severity: "error", ACLs: []string{"trailing-and"}, Switches: []string(nil), Offset: 23},
		{Rule: "invalid-match", Severity: "error", ACLs: []string{"unknown-field"}, Switches: []string(nil), Offset: 0},
		{Rule: "invalid-match", Severity: "error", ACLs: []string{"empty"}, Switches: []string(nil), Offset: 0},
	}},
	{"missing-prereq.yaml", []got{
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"not-http"}, Switches: []string{"sw0"}, Offset: 2},
	}},
	{"negated-multibit.yaml", []got{
		{Rule: "negated-multibit", Severity: "warning", ACLs: []string{"no-ttl"}, Switches: []string{"sw0"}, Offset: 7},
	}},
	{"reject-or-discarded.yaml", []got{
		{Rule: "reject-or-discarded", Severity: "error", ACLs: []string{"reject-telnet"}, Switches: []string{"sw0"}, Offset: 14},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"reject-telnet"}, Switches: []string{"sw0"}, Offset: 0},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"reject-telnet-1"}, Switches: []string{"sw1"}, Offset: 0},
	}},
	{"same-priority-overlap.yaml", []got{
		{Rule: "same-priority-overlap", Severity: "warning", ACLs: []string{"drop-ip", "stateless-tcp"}, Switches: []string{"ls"}, Offset: -1},
	}},
	{"shadowed.yaml", []got{
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"drop-http", "allow-tcp"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"drop-ssh-ranges", "allow-tcp"}, Switches: []string{"sw0"}, Offset: -1},
		// Undecidable with the cube bounds (`!=' on a 32-bit field); the
		// exact sets decide it (TestExactWitnesses checks it with Eval).
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"drop-host", "allow-not-gw"}, Switches: []string{"sw1"}, Offset: -1},
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"allow-all-tcp", "allow-low-ports", "drop-high-ports"}, Switches: []string{"sw2"}, Offset: -1},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"allow-https-lan"}, Switches: []string{"sw0"}, Offset: 18},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"allow-https-lan"}, Switches: []string{"sw0"}, Offset: 0},
		{Rule: "shadowed", Severity: "info", ACLs: []string{"allow-https-lan", "allow-tcp"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"drop-ssh-ranges"}, Switches: []string{"sw0"}, Offset: 13},
	}},
	{"slice-overflow.yaml", []got{
		{Rule: "slice-overflow", Severity: "warning", ACLs: []string{"reg-bits"}, Switches: []string{"sw0"}, Offset: 14},
	}},
	{"stateless-lb-vip.yaml", []got{
		{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"fast-tcp"}, Switches: []string{"sw-clients"}, Offset: -1},
		{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"backend-replies"}, Switches: []string{"sw-backends"}, Offset: -1},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"backend-replies"}, Switches: []string{"sw-backends"}, Offset: 0},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"backend-replies"}, Switches: []string{"sw-backends"}, Offset: 25},
	}},
	{"stateless-no-reply.yaml", []got{
		{Rule: "stateless-no-reply", Severity: "warning", ACLs: []string{"web-out", "default-deny-in"}, Switches: []string{"sw0"}, Offset: -1},
	}},
	// Tiers (OVN 23.06+; these fixtures name no release: 26.03).
	{"tiers-shadowed.yaml", []got{
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"np-allow-ssh", "anp-deny-ssh"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "same-priority-overlap", Severity: "warning", ACLs: []string{"np-8080", "np-drop-p9"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "shadowed", Severity: "info", ACLs: []string{"np-drop-telnet", "anp-drop-low"}, Switches: []string{"sw0"}, Offset: -1},
	}},
	{"pass-to-default.yaml", []got{
		{Rule: "pass-to-default", Severity: "warning", ACLs: []string{"anp-pass-udp"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "pass-to-default", Severity: "warning", ACLs: []string{"banp-pass"}, Switches: []string{"sw1"}, Offset: -1},
	}},
	{"pass-to-default-drop.yaml", []got{
		{Rule: "pass-to-default", Severity: "warning", ACLs: []string{"anp-pass-dns"}, Switches: []string{"sw0"}, Offset: -1},
	}},
	{"stateless-mark-priority.yaml", []got{
		{Rule: "stateless-mark-ignores-tiers", Severity: "warning", ACLs: []string{"fast-tcp", "allow-web"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "stateless-mark-ignores-tiers", Severity: "warning", ACLs: []string{"fast-tcp-4", "after-lb-web"}, Switches: []string{"sw4"}, Offset: -1},
	}},
	{"stateless-mark-ignores-tiers.yaml", []got{
		{Rule: "stateless-mark-ignores-tiers", Severity: "warning", ACLs: []string{"np-fast-tcp", "anp-allow-web", "anp-drop-ssh"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"np-allow-web", "anp-fast-tcp"}, Switches: []string{"sw1"}, Offset: -1},
		{Rule: "stateless-mark-ignores-tiers", Severity: "warning", ACLs: []string{"np-fast-tcp-2", "anp-allow-web-2"}, Switches: []string{"sw2"}, Offset: -1},
		{Rule: "stateless-mark-ignores-tiers", Severity: "info", ACLs: []string{"np-fast-tcp-3", "anp-allow-web-3"}, Switches: []string{"sw3"}, Offset: -1},
	}},
	// sw0: the pass above the drop saves the replies (for the default);
	// sw1: the drop is above the pass.
	{"tiers-stateless-no-reply.yaml", []got{
		{Rule: "pass-to-default", Severity: "warning", ACLs: []string{"pass-web-replies"}, Switches: []string{"sw0"}, Offset: -1},
		{Rule: "stateless-no-reply", Severity: "warning", ACLs: []string{"web-out-1", "deny-in-1"}, Switches: []string{"sw1"}, Offset: -1},
		{Rule: "shadowed", Severity: "warning", ACLs: []string{"pass-web-replies-1", "deny-in-1"}, Switches: []string{"sw1"}, Offset: -1},
		// shared by sw2 and sw3: sw2's own pass saves the replies
		{Rule: "pass-to-default", Severity: "warning", ACLs: []string{"pass-web-replies-2"}, Switches: []string{"sw2"}, Offset: -1},
		{Rule: "stateless-no-reply", Severity: "warning", ACLs: []string{"web-out-pg", "deny-in-pg"}, Switches: []string{"sw3"}, Offset: -1},
	}},
	{"stateless-lb-vip-mode.yaml", []got{
		{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"fast-tcp-2"}, Switches: []string{"sw-plain"}, Offset: -1},
	}},
}
