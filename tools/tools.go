//go:build tools

// Package tools pins the code generators this module runs, so that
// `go generate` uses the versions recorded in go.mod (the module proxy
// here refuses version lists, so `go run pkg@version` cannot be used).
package tools

import (
	_ "github.com/ovn-kubernetes/libovsdb/cmd/modelgen"
)
