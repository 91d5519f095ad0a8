package lflow

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitActions(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "next;", want: []string{"next"}},
		{in: "/* drop */", want: nil},
		{in: `reg0[1] = 1; log(name="a;b", severity=info); next;`, want: []string{"reg0[1] = 1", `log(name="a;b", severity=info)`, "next"}},
		{in: `reject { eth.dst <-> eth.src; outport <-> inport; next(pipeline=egress,table=5); };`, want: []string{"reject { eth.dst <-> eth.src; outport <-> inport; next(pipeline=egress,table=5); }"}},
		{in: `ct_commit { ct_mark.blocked = 0; }; /* c */ next;`, want: []string{"ct_commit { ct_mark.blocked = 0; }", "next"}},
		{in: `log(name="x\"; y"); drop;`, want: []string{`log(name="x\"; y")`, "drop"}},
		{in: "reject { next;", err: "unbalanced braces"},
		{in: "next; }", err: "unbalanced"},
		{in: `log(name="x`, err: "unterminated string"},
		{in: "next; /* x", err: "unterminated comment"},
	} {
		got, err := SplitActions(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseNext(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Next
		err  bool
	}{
		{in: "5", want: Next{Table: 5}},
		{in: "pipeline=egress,table=3", want: Next{HasPipeline: true, Pipeline: Egress, Table: 3}},
		{in: " pipeline = ingress , table = 0 ", want: Next{HasPipeline: true, Pipeline: Ingress, Table: 0}},
		{in: "pipeline=egress", want: Next{HasPipeline: true, Pipeline: Egress, Table: -1}},
		{in: "table=2,foo=1", want: Next{Table: 2, Unknown: []string{"foo"}}},
		{in: "table=x", err: true},
	} {
		got, err := ParseNext(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if !c.err && (got.HasPipeline != c.want.HasPipeline || got.Pipeline != c.want.Pipeline || got.Table != c.want.Table || !slices.Equal(got.Unknown, c.want.Unknown)) {
			t.Errorf("%q: %+v, want %+v", c.in, got, c.want)
		}
	}
}
