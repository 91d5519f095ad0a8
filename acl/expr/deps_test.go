package expr

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly checks that the match language needs the
// standard library only: no package outside it among its dependencies.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/aclc/aclc/acl/expr" {
			t.Errorf("acl/expr depends on %s", p)
		}
	}
}
