package nbschema_test

import (
	"bytes"
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

// fixture50k is a generated NB with 50k ACLs, written as a fixture.
func fixture50k(b *testing.B) []byte {
	b.Helper()
	p := nbgen.Default()
	p.ACLs = 50000
	var buf bytes.Buffer
	if err := nbschema.WriteFixture(&buf, nbgen.Generate(p)); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkParseFixture50k(b *testing.B) {
	data := fixture50k(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := nbschema.ParseFixture("50k.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFixture50k(b *testing.B) {
	p := nbgen.Default()
	p.ACLs = 50000
	snap := nbgen.Generate(p)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := nbschema.WriteFixture(&buf, snap); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
	}
}
