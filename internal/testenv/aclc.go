package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var aclcBuild struct {
	once sync.Once
	path string
	out  []byte
	err  error
}

// AclcBinary builds cmd/aclc once per test binary and returns its path, for
// tests that run the command line as a user would. The directory is
// world-readable so that a test may run the binary as another user. In
// -short mode the test is skipped.
func AclcBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the aclc binary")
	}
	aclcBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "aclc-test-bin-")
		if err != nil {
			aclcBuild.err = err
			return
		}
		_ = os.Chmod(dir, 0o755)
		aclcBuild.path = filepath.Join(dir, "aclc")
		aclcBuild.out, aclcBuild.err = exec.Command("go", "build", "-o", aclcBuild.path, "github.com/aclc/aclc/cmd/aclc").CombinedOutput()
	})
	if aclcBuild.err != nil {
		t.Fatalf("go build github.com/aclc/aclc/cmd/aclc: %v\n%s", aclcBuild.err, aclcBuild.out)
	}
	return aclcBuild.path
}

// RemoveAclcBinary deletes the binary AclcBinary built, if any; call it
// from TestMain after m.Run.
func RemoveAclcBinary() {
	if aclcBuild.path != "" {
		os.RemoveAll(filepath.Dir(aclcBuild.path))
	}
}
