package compile

// ScanSwitchACLs makes the engine look for other producers of a flow
// among the switch's ACLs whenever a key has more candidates than the
// switch has ACLs (not only from 16 of them), until restore is called.
func ScanSwitchACLs() (restore func()) {
	old := scanFrom
	scanFrom = 0
	return func() { scanFrom = old }
}
