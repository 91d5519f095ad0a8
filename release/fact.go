package release

import "fmt"

// Fact is one dated fact about OVN: a behaviour of northd (a flow it
// writes, a register it uses), a rule of the match language, or an NB
// input (a column, table, action value or option key) that northd reads.
// It is stated once, here, with the first version of each upstream branch
// that has it (Since); compile, trace, lint, nbview, nbschema and the
// match language all ask a Release whether it has the fact.
type Fact struct {
	kind    FactKind
	name    string // short name, e.g. "commit-in-hint"
	what    string // what it is, in northd's or the NB's terms
	input   string // for an NB input: what a user writes ("ACL column tier"); else ""
	commits string // the upstream commit(s) in ovn-org/ovn, one per branch
	since   Since
	dialect string // for a match-language change: its name in acl/expr
}

// FactKind says what a fact is about, and so what pins its since-points.
type FactKind uint8

const (
	// FlowFact: how northd builds the ACL-stage flows; pinned by the
	// goldens of the versions on both sides of each since-point
	// (compile's TestSincePoints).
	FlowFact FactKind = iota
	// InputFact: an NB input (column, table, action, option key) the ACL
	// stages read; pinned by which fixtures each version's own
	// ovsdb-server accepts (testdata/regen.sh, TestGolden).
	InputFact
	// MatchFact: a change of the match language; pinned by each
	// version's own parser (acl/expr's corpus, labelled by its ovn-trace).
	MatchFact
	// TraceFact: a behaviour of the stages aclc models for trace (and
	// ovn-trace's own); pinned by the live trace differential tests.
	TraceFact
	// RouterFact: how northd builds the flows of the logical routers
	// aclc compiles (a router stage, a flow of one); pinned by
	// compile's TestRoutersNorthd on each version whose router pipeline
	// aclc verifies (compile.CompilesRouters), byte for byte.
	RouterFact
)

// facts lists every fact, in declaration order.
var facts []*Fact

// newFact declares how northd builds the ACL-stage flows.
func newFact(name, commits, what string, since Since) *Fact {
	return declare(&Fact{kind: FlowFact, name: name, what: what, commits: commits, since: since})
}

// newTraceFact declares a behaviour of the stages trace models.
func newTraceFact(name, commits, what string, since Since) *Fact {
	return declare(&Fact{kind: TraceFact, name: name, what: what, commits: commits, since: since})
}

// newRouterFact declares how northd builds a logical router's flows.
func newRouterFact(name, commits, what string, since Since) *Fact {
	return declare(&Fact{kind: RouterFact, name: name, what: what, commits: commits, since: since})
}

// newInput declares an NB input that the ACL stages read from Since on.
func newInput(name, input, commits string, since Since) *Fact {
	return declare(&Fact{kind: InputFact, name: name, what: input, input: input, commits: commits, since: since})
}

func declare(f *Fact) *Fact {
	facts = append(facts, f)
	return f
}

// Kind says what the fact is about.
func (f *Fact) Kind() FactKind { return f.kind }

// Facts returns every fact, in declaration order.
func Facts() []*Fact { return append([]*Fact(nil), facts...) }

// Features returns the facts that are NB inputs (tier, pass, sampling,
// network functions, ...), for the fixture codec and `aclc releases`.
func Features() []*Fact {
	var out []*Fact
	for _, f := range facts {
		if f.input != "" {
			out = append(out, f)
		}
	}
	return out
}

// FactByName finds a fact by its short name.
func FactByName(name string) (*Fact, bool) {
	for _, f := range facts {
		if f.name == name {
			return f, true
		}
	}
	return nil, false
}

// Name is the fact's short name ("commit-in-hint").
func (f *Fact) Name() string { return f.name }

// What says what the fact is.
func (f *Fact) What() string { return f.what }

// Input is, for an NB input, what a user writes ("ACL column tier"); "" for
// a behaviour.
func (f *Fact) Input() string { return f.input }

// Commits are the upstream commits that brought the fact, one per branch.
func (f *Fact) Commits() string { return f.commits }

// Since is when the fact holds.
func (f *Fact) Since() Since { return f.since }

// String is the short name.
func (f *Fact) String() string { return f.name }

// Has reports whether release r has fact f.
func (r *Release) Has(f *Fact) bool {
	if on, ok := r.overrides[f]; ok {
		return on
	}
	return f.since.Holds(r.Version)
}

// Check returns a *FeatureError when r lacks the NB input f, else nil.
func (r *Release) Check(f *Fact) error {
	if r.Has(f) {
		return nil
	}
	return &FeatureError{Feature: f, Release: r}
}

// FeatureError is a use of an NB input the chosen release lacks.
type FeatureError struct {
	Feature *Fact
	Release *Release
}

func (e *FeatureError) Error() string {
	what := e.Feature.input
	if what == "" {
		what = e.Feature.what
	}
	return fmt.Sprintf("%s came in %s; OVN %s does not have it", what, e.Feature.since.describe(), e.Release.Name())
}
