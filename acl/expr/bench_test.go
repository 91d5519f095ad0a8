package expr

import "testing"

const benchMatch = `outport == @pg1 && ip4 && ip4.src == $as1 && tcp && tcp.dst == {80, 443, 8080} && ct.est && !ct.rel && ct_mark.blocked == 0`

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse(benchMatch, corpusResolver{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	for b.Loop() {
		if err := Valid(benchMatch, corpusResolver{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEval(b *testing.B) {
	e, err := Parse(benchMatch, corpusResolver{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := ParseMicroflow(`outport == "lsp1" && ip4.src == 10.0.0.1 && tcp.dst == 443 && ct.trk && ct.est`, corpusResolver{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Eval(e, m, corpusResolver{}); err != nil {
			b.Fatal(err)
		}
	}
}
