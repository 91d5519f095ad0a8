package lint

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestLexedMembers checks that asCache.members gives the constants
// parseMembers (OVN's reading of an address set's entries) gives, in the
// same order, whether it takes them from the resolver's lexed constants
// or parses the entries: on address sets with IPv4, IPv6, MAC and masked
// entries, duplicates, extra tokens, junk and entries that only parse
// alone, and on 2,000 random ones.
func TestLexedMembers(t *testing.T) {
	sets := [][]string{
		{"10.0.0.1", "10.0.0.2"},
		{"10.0.0.10", "10.0.0.9", "10.0.0.10", "  10.0.0.3  extra"},
		{"fe80::1", "10.1.0.0/16", "10.1.0.5/16", "00:11:22:33:44:55", "0x10/0xff", "7"},
		{"foo", "10.0.0.1"},
		{"10.0.0.1,10.0.0.2", "10.0.0.3"},
		{"", " ", "10.0.0.1"},
		{"340282366920938463463374607431768211456", "10.0.0.1"}, // 129 bits
		{"10.0.0.0/33", "10.0.0.1"},
		{"$as", "@pg", "\"str\"", "10.0.0.1"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pick := []string{"10.0.0.1", "10.0.0.2", "10.0.%d.%d", "fd00::%x", "10.%d.0.0/16", "192.168.%d.0/24", "0x%x", "%d",
		"aa:bb:cc:dd:ee:%02x", "10.0.0.%d junk", "1.2.3.4/255.0.255.0", "::/0", "bad%d", "10.0.0.%d,10.0.0.1"}
	for i := range 2000 {
		var s []string
		n := len(pick) - 2 // every other set without the entries that do not lex whole
		if i%2 == 1 {
			n = len(pick)
		}
		for range r.IntN(30) {
			f := pick[r.IntN(n)]
			a, b := r.IntN(256), r.IntN(256)
			switch strings.Count(f, "%") {
			case 0:
				s = append(s, f)
			case 1:
				s = append(s, fmt.Sprintf(f, a))
			default:
				s = append(s, fmt.Sprintf(f, a, b))
			}
		}
		sets = append(sets, s)
	}
	as := map[string][]string{}
	for i, s := range sets {
		as[fmt.Sprint("as", i)] = s
	}
	global := expr.MapResolver{AddressSets: as, Members: expr.NewMemberCache()}
	c := newASCache()
	c.global = &global
	lexedSome := 0
	for i, s := range sets {
		name := fmt.Sprint("as", i)
		want := parseMembers(s)
		if _, ok := c.lexed(name, as[name]); ok {
			lexedSome++
		}
		got := c.members(name, as[name])
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, want %d", s, len(got), len(want))
		}
		for j := range got {
			g, w := got[j], want[j]
			if g.Kind != w.Kind || g.Value.Cmp(w.Value) != 0 || (g.Mask == nil) != (w.Mask == nil) || g.Mask != nil && g.Mask.Cmp(w.Mask) != 0 {
				t.Fatalf("%q: member %d is %v/%v (%v), want %v/%v (%v)", s, j, g.Value, g.Mask, g.Kind, w.Value, w.Mask, w.Kind)
			}
		}
	}
	if lexedSome < len(sets)/4 {
		t.Fatalf("only %d of %d sets taken from the lexed constants", lexedSome, len(sets))
	}
}
