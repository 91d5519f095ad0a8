// Package lint finds mistakes in OVN Northbound ACLs as the ovn-northd
// and ovn-controller of their release (release.go) would treat them:
// matches OVN rejects or reads differently than written, ACLs that
// conflict or can never decide (per tier from 23.06), pass ACLs that meet
// the default, allow-stateless rules whose replies, load-balanced traffic
// or earlier tiers break, and the northd quirks that silently discard
// flows or drop traffic.
//
// Lint analyses every logical switch separately, with the ACLs that apply
// there (its own and those of the port groups that have ports on it) and
// the address sets and port groups as ovn-controller resolves them on that
// datapath. Findings about the same ACLs that show on several switches are
// reported once, listing the switches.
//
// Each rule family lives in its own file: match.go (invalid matches,
// dangling references, expression warnings), conflict.go (same-priority
// overlaps, shadowing), tiers.go (the same per tier, pass-to-default),
// stateless.go (replies of allow-stateless traffic, load balancer VIPs),
// statelessmark.go (stateless marking ahead of earlier tiers), northd.go
// (the reject-with-|| flow, default_acl_drop and the after-LB stage). The
// set reasoning they share is in sets.go (cubes, bounded from above and
// below: the fast path) and exact.go (package pset's exact sets, which
// decide shadowing and overlaps where the bounds do not).
package lint

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// Severity ranks findings.
type Severity int

// Severities, least severe first.
const (
	// Info is worth knowing but may well be intended, or could not be
	// decided.
	Info Severity = iota
	// Warning is probably a mistake.
	Warning
	// Error means OVN discards a flow or drops traffic the ACLs allow.
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Rule names, as they appear in findings; docs/lint.md describes each.
const (
	// RuleInvalidMatch: the match does not parse (or is empty).
	RuleInvalidMatch = "invalid-match"
	// RuleDanglingRef: a $address_set or @port_group OVN cannot resolve on
	// the switch.
	RuleDanglingRef = "dangling-ref"
	// RuleEmptySet: a comparison with an empty address set.
	RuleEmptySet = "empty-set"
	// RuleHostBits: a masked constant with bits outside its mask.
	RuleHostBits = "host-bits"
	// RuleMissingPrereq: a field used without its prerequisite.
	RuleMissingPrereq = "missing-prereq"
	// RuleContradiction: a conjunction term that can never match.
	RuleContradiction = "contradiction"
	// RuleSliceOverflow: a constant wider than the selected bits.
	RuleSliceOverflow = "slice-overflow"
	// RuleNegatedMultibit: `!field' on a multi-bit field.
	RuleNegatedMultibit = "negated-multibit"
	// RuleSamePriority: overlapping ACLs with different verdicts at one
	// priority.
	RuleSamePriority = "same-priority-overlap"
	// RuleShadowed: an ACL higher-priority ACLs always decide first.
	RuleShadowed = "shadowed"
	// RuleStatelessNoReply: allow-stateless traffic whose replies are
	// dropped.
	RuleStatelessNoReply = "stateless-no-reply"
	// RuleStatelessLBVIP: allow-stateless traffic that skips a load
	// balancer VIP.
	RuleStatelessLBVIP = "stateless-lb-vip"
	// RuleRejectOr: a reject ACL whose 23.03 flow OVN cannot parse.
	RuleRejectOr = "reject-or-discarded"
	// RuleDefaultDropAfterLB: default_acl_drop=true dropping allowed
	// traffic in the after-LB ACL stage.
	RuleDefaultDropAfterLB = "default-drop-after-lb"
	// RuleUnpickedPass (tiers.go) and RuleStatelessMark
	// (statelessmark.go) are the tier rules (OVN 23.06+).
	// RuleNorthdUndecided and RuleTiersIgnored (northd.go): what OVN
	// 24.03's northd makes of a switch's tiers (FDP-1154).
)

// ACLRef identifies an ACL in a finding.
type ACLRef struct {
	// UUID is the ACL row's UUID.
	UUID string `json:"uuid"`
	// Name is the ACL's name column, "" when unset.
	Name string `json:"name,omitempty"`
	// Owner is "Logical_Switch NAME" or "Port_Group NAME".
	Owner string `json:"owner,omitempty"`
	// Origin is where the row came from: "file.yaml:12:7" or "NB ACL <uuid>".
	Origin string            `json:"origin"`
	pos    nbschema.Position // Origin's position, for a fixture row
	// Direction, Priority, Action and Match are the ACL's columns.
	Direction string `json:"direction"`
	Priority  int    `json:"priority"`
	Action    string `json:"action"`
	Match     string `json:"match"`
	// How, for an ACL listed with a shadowed one, says how it keeps that
	// ACL from deciding the packets it takes first: a higher priority (in
	// its tier), an earlier tier, or a pass of its tier.
	How string `json:"how,omitempty"`
}

// String names the ACL for a human: its name or UUID and owner.
func (r ACLRef) String() string {
	id := "ACL " + r.UUID
	if r.Name != "" {
		id = fmt.Sprintf("ACL %q", r.Name)
	}
	if r.Owner != "" {
		id += " on " + r.Owner
	}
	return fmt.Sprintf("%s (%s priority %d %s: %s)", id, r.Direction, r.Priority, r.Action, r.Match)
}

// Finding is one problem.
type Finding struct {
	// Rule names the rule that fired (RuleInvalidMatch, ...).
	Rule string `json:"rule"`
	// Severity ranks it.
	Severity Severity `json:"severity"`
	// ACLs are the ACLs involved, the one the finding is about first.
	ACLs []ACLRef `json:"acls"`
	// Switches lists the logical switches on which it shows, by name;
	// empty when it does not depend on a switch.
	Switches []string `json:"switches,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
	// Fix says how to fix it, in one line.
	Fix string `json:"fix"`
	// Offset, when not nil, is the byte offset in ACLs[0].Match of the
	// character at fault.
	Offset *int `json:"offset,omitempty"`
}

// Report is the result of Lint.
type Report struct {
	// Findings, sorted by severity (errors first), then origin and rule.
	Findings []Finding `json:"findings"`
	// Stats describes the run.
	Stats Stats `json:"stats"`
}

// Stats describes a lint run.
type Stats struct {
	// ACLs and Switches count what was analysed.
	ACLs     int `json:"acls"`
	Switches int `json:"switches"`
	// Errors, Warnings and Infos count the findings by severity.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Elapsed is the wall time Lint took.
	Elapsed time.Duration `json:"-"`
}

// HasErrors reports whether any finding is at error level.
func (r *Report) HasErrors() bool { return r.Stats.Errors > 0 }

// stage is an ACL stage (nbview's).
type stage = nbview.Stage

const (
	inACL     = nbview.StageIngress
	inAfterLB = nbview.StageAfterLB
	outACL    = nbview.StageEgress
	nStages   = nbview.NumStages
)

// verdict classes for conflict reasoning (nbview's).
type verdict = nbview.Verdict

const (
	vAllow     = nbview.VerdictAllow     // allow, allow-related
	vStateless = nbview.VerdictStateless // allow-stateless
	vDrop      = nbview.VerdictDrop      // drop
	vReject    = nbview.VerdictReject    // reject
	vOther     = nbview.VerdictOther
)

// aclInfo is what lint knows about an ACL independently of the switch.
type aclInfo struct {
	acl     *nbdb.ACL
	ref     ACLRef
	stage   stage
	verdict verdict
	syntax  error      // parse error with every reference assumed to exist
	global  *expr.Expr // the parse with NB-wide references, nil if one is missing
	pgRefs  []string   // @port_group names referenced
	asRefs  []string   // $address_set names referenced
	asPos   []int      // asPos[i]: the offset of asRefs[i]'s first reference
	pgPos   []int      // the same for pgRefs
	pgOwner string     // the port group that lists it, "" when a switch does
	listed  int        // how many switch and port group rows list it
	match   int32      // its match text, numbered: equal for equal texts (layer.dups)
	pass    bool       // its action is pass
	idx     int        // its index in the linter's counters (copies share them)
}

// inst is an ACL on one switch, or, when shared, on every switch where
// its cubes are the same (scope.go).
type inst struct {
	a      *aclInfo
	prio   int        // a.acl.Priority, read without the two hops by sorts and indexes
	e      *expr.Expr // nil when the match does not parse here
	set    *set       // nil when e is nil
	hull   cube       // hull(set.over), computed with set
	shared bool
	sh     *sharedPart // a shared instance's, nil for a switch's own
	// dec, for an instance that stands for what an ACL of an earlier tier
	// decides (tiers.go), says which ACL and which passes.
	dec *decidedBy
}

// sharedPart is what only a shared instance needs, apart: a switch's own
// instances, hundreds of thousands at 50k ACLs, are then half the size.
type sharedPart struct {
	once  sync.Once           // computes the set
	reply atomic.Pointer[set] // replySet (replyOf)
	key   [32]byte            // the UUID's SHA-256 digest (classKey)
}

// decidedBy is what an ACL of an earlier tier decides: its match minus
// the pass ACLs of its tier at its priority or above.
type decidedBy struct {
	orig   *inst
	passes []*inst
	tier   int
}

// swView is one logical switch as the ACL stages see it.
type swView struct {
	id, name string
	ls       *nbdb.LogicalSwitch
	res      expr.MapResolver
	parseRes swResolver      // res for the parser: address sets' members from the NB-wide cache
	cover    map[string]bool // port groups holding every port of the switch
	cls      *class
	own      []*inst // the ACLs that apply that are not shared
	shared   []*inst // the others, until the switch's class holds them
	hasACLs  bool
	stateful bool         // has an allow-related ACL or a load balancer VIP
	maxTier  nbview.Tiers // northd's max_acl_tier per stage (tiers.go)
	// contest: the port groups whose order in northd's hash table decides
	// maxTier when the NB does not (nbview.Switch.TierContest).
	contest []string
	// tierStop: the ACL at which northd's FDP-1154 scan stopped, so that it
	// ignores every tier on the switch (nbview.Switch.TierStop).
	tierStop *nbdb.ACL
	// tierLy holds, per stage with tiers, each tier's layer and what the
	// earlier tiers decide (tiers.go), for the rules that run after it.
	tierLy [nStages]map[int][2]*layer
	lbVIP  bool
	lbs    []*nbdb.LoadBalancer
	vips   []vipTraffic // cached by vipSetsCached

	dynMu sync.Mutex
	dyn   map[dynKey]*set // splitSet's port group terms, converted here
	arena arena           // splitSet's products

	ports   []string // the names of the switch's ports: the exact sets' port domain
	exactMu sync.Mutex
	exact   *exactSets // built when a question needs them (exact.go)
}

// linter holds the NB-wide state of one run.
type linter struct {
	s              *nbschema.Snapshot
	nb             *nbview.View
	acls           map[string]*aclInfo
	pgACLs         map[string][]*aclInfo // by port group UUID, the ACLs it lists that exist
	globalRes      expr.MapResolver
	as             *asCache
	defaultACLDrop bool
	rel            *release.Release // the release lint judges for (release.go)
	dialect        *expr.Dialect    // its match language
	tiers          bool             // its northd evaluates tiers and pass
	rejectHints    []string         // compile.RejectPrefixesFor(rel)
	lbModeKnown    bool             // rel reads enable-stateless-acl-with-lb
	exprCache      sync.Map         // cache key → *expr.Expr or error
	shared         sync.Map         // *aclInfo → its shared *inst
	blocks         sync.Map         // port group UUID → *pgDeps, and with a cover → *pgBlock (scope.go, while building views)
	validCache     sync.Map         // reject flow key → error (nil: valid)
	termIDs        sync.Map         // port group name or term text → int32 (termID)
	nTermIDs       atomic.Int32

	// By aclInfo.idx: uses counts the switches still to be linted that see
	// the ACL as their own, its cached sets dropped after the last one (at
	// 50k ACLs they were most of the memory of a run); asOK is
	// addressSetsOK's answer once known (1 yes, 2 no).
	uses, asOK []atomic.Int32
	splits     []atomic.Pointer[split] // splitSet's split of the ACL's match, while a switch still to be linted sees it
}

// newLinter reads the snapshot's NB-wide state: every ACL parsed, the
// resolver and the per-port-group ACL lists the switch views are built
// from.
func newLinter(s *nbschema.Snapshot) (*linter, error) {
	l := &linter{s: s, nb: nbview.New(s), acls: make(map[string]*aclInfo, len(s.ACLs)), as: newASCache(),
		defaultACLDrop: s.GlobalOption("default_acl_drop") == "true"}
	l.setRelease(s.Release)
	// nbview's index of which row lists each ACL (built once, on first
	// use, by the first newInfo while the other workers wait) beside the
	// resolver.
	owners := make(chan struct{})
	go func() { l.nb.Owner(""); close(owners) }()
	var err error
	if l.globalRes, err = l.nb.Resolver(""); err != nil {
		<-owners
		return nil, fmt.Errorf("lint: resolving address sets: %w", err)
	}
	<-owners
	l.globalRes.Members = expr.NewMemberCache()
	l.as.global = &l.globalRes
	ids := slices.Collect(maps.Keys(s.ACLs)) // in no order: each ACL's info is its own
	infos := make([]*aclInfo, len(ids))
	par.For(len(ids), 1, func(i int) { infos[i] = l.newInfo(ids[i]) })
	matches := make(map[string]int32, len(ids))
	for i, id := range ids {
		a := infos[i]
		l.acls[id], a.idx = a, i
		m, ok := matches[a.acl.Match]
		if !ok {
			m = int32(len(matches))
			matches[a.acl.Match] = m
		}
		a.match = m
	}
	l.uses, l.asOK = make([]atomic.Int32, len(ids)), make([]atomic.Int32, len(ids))
	l.splits = make([]atomic.Pointer[split], len(ids))
	l.countListings()
	return l, nil
}

// Lint analyses the snapshot.
func Lint(s *nbschema.Snapshot) (*Report, error) {
	start := time.Now()
	l, err := newLinter(s)
	if err != nil {
		return nil, err
	}

	// Findings are merged as each switch hands them over, so that the
	// copies other switches of a class report die young (at 50k ACLs of
	// the cluster shape the stateless-mark findings of 400 switches were
	// 100 MB of the live heap, waiting for the merge at the end).
	var m merger
	add := m.add
	// The NB-wide findings beside the views (both only read the infos).
	global := make(chan []Finding, 1)
	go func() { global <- l.globalFindings() }()

	swIDs := nbschema.SortedKeys(s.Switches)
	views := make([]*swView, len(swIDs))
	par.For(len(swIDs), 1, func(i int) { views[i] = l.view(swIDs[i]) })
	add(<-global)
	l.blocks.Clear()
	byKey := map[[32]byte]*class{}
	var classes []*class
	for _, v := range views {
		for _, in := range v.own {
			l.uses[in.a.idx].Add(1)
		}
		k := classKey(v, v.shared)
		c := byKey[k]
		if c == nil {
			c = &class{shared: v.shared, stateful: v.stateful, flat: v.tierStop != nil}
			byKey[k] = c
			classes = append(classes, c)
		}
		c.views = append(c.views, v)
		c.names = append(c.names, v.name)
		v.cls, v.shared = c, nil
	}
	par.For(len(classes), 1, func(i int) { l.analyse(classes[i]) })
	for _, a := range l.acls {
		if l.uses[a.idx].Load() == 0 {
			a.global = nil // no switch parses it as its own (a shared instance keeps its own pointer)
		}
	}
	views = neighbourOrder(views)
	par.For(len(views), 1, func(i int) {
		add(l.lintSwitch(views[i], views[i].cls))
		l.release(views[i])
		views[i] = nil
	})
	for _, c := range classes {
		add(c.findings())
	}

	r := &Report{Findings: m.result()}
	r.Stats.ACLs, r.Stats.Switches = len(s.ACLs), len(s.Switches)
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			r.Stats.Errors++
		case Warning:
			r.Stats.Warnings++
		default:
			r.Stats.Infos++
		}
	}
	r.Stats.Elapsed = time.Since(start)
	return r, nil
}

func (l *linter) newInfo(id string) *aclInfo {
	f, _ := l.nb.ACL(id)
	acl := f.Row
	a := &aclInfo{acl: acl, verdict: f.Verdict, stage: f.Stage, pass: acl.Action == nbdb.ACLActionPass}
	a.ref = ACLRef{UUID: acl.UUID, Owner: f.Owner.String(), Origin: l.s.Where("ACL", acl.UUID), pos: l.s.Position(acl.UUID),
		Direction: acl.Direction, Priority: acl.Priority, Action: acl.Action, Match: acl.Match}
	if acl.Name != nil {
		a.ref.Name = *acl.Name
	}
	if f.Owner.Table == nbdb.PortGroupTable {
		a.pgOwner = f.Owner.Name
	}
	// Parsed with every port group that has ports somewhere: on a switch
	// where all its references resolve, the switch's parse is the same
	// (port group contents only matter for the empty-set warning, and a
	// group that exists on a switch has ports there).
	e, err := l.dialect.Parse(acl.Match, &l.globalRes) // a pointer: no copy boxed per ACL
	if err != nil {
		if e, err = l.dialect.Parse(acl.Match, nil); err != nil {
			a.syntax = err
			return a
		}
		e.Warnings = nil // reparsed per switch
		a.global = nil
	} else {
		a.global = e
	}
	a.asRefs, a.asPos, a.pgRefs, a.pgPos = collectRefs(e.Root)
	return a
}

// view builds the switch's view: what nbview says applies there.
func (l *linter) view(id string) *swView {
	sw := l.nb.Switch(id)
	v := &swView{id: id, name: sw.LS.Name, ls: sw.LS}
	v.res = expr.MapResolver{AddressSets: l.globalRes.AddressSets, PortGroups: l.nb.SwitchPortGroupPorts(id)}
	v.parseRes = swResolver{v.res, l.globalRes}
	lsps := l.nb.Ports(sw)
	owned := len(lsps)
	v.ports = make([]string, owned)
	for i, p := range lsps {
		v.ports[i] = p.Name
	}
	v.cover = map[string]bool{}
	for pg, ports := range v.res.PortGroups {
		if owned > 0 && len(ports) == owned {
			v.cover[pg] = true
		}
	}
	l.applied(v, sw)
	v.hasACLs = sw.HasACLs
	v.lbs = l.nb.SwitchLBs(sw.LS, true)
	v.lbVIP = sw.HasLBVIP
	v.stateful = sw.Stateful()
	v.maxTier = sw.MaxTier
	v.contest, v.tierStop = sw.TierContest, sw.TierStop
	return v
}

// countListings fills l.pgACLs and each ACL's listed count.
func (l *linter) countListings() {
	for _, ls := range l.s.Switches {
		for _, id := range ls.ACLs {
			if a := l.acls[id]; a != nil {
				a.listed++
			}
		}
	}
	l.pgACLs = make(map[string][]*aclInfo, len(l.s.PortGroups))
	for id, pg := range l.s.PortGroups {
		as := make([]*aclInfo, 0, len(pg.ACLs))
		for _, aid := range pg.ACLs {
			if a := l.acls[aid]; a != nil {
				a.listed++
				as = append(as, a)
			}
		}
		l.pgACLs[id] = as
	}
}

// swResolver is a switch's resolver for the parser: its port groups, and
// the NB's address sets with their members converted once for the whole
// run by the global resolver's cache (a switch's parse converted every
// address set it references anew: $cluster_ip4's 5,000 addresses for each
// reject flow checked at 50k ACLs of the cluster shape, 0.9 s of CPU).
type swResolver struct {
	expr.MapResolver                  // the switch's; AddressSets are global's
	global           expr.MapResolver // the NB-wide resolver, with its MemberCache
}

// AddressSetMembers implements expr.MemberResolver.
func (r swResolver) AddressSetMembers(name string) ([]expr.Const, bool) {
	return r.global.AddressSetMembers(name)
}

// refKey is the part of the datapath resolver an ACL's parse depends on:
// which of its port group references exist here.
func (v *swView) refKey(a *aclInfo) string {
	var b strings.Builder
	b.WriteString(a.acl.UUID)
	for _, pg := range a.pgRefs {
		if _, ok := v.res.PortGroups[pg]; ok {
			b.WriteString("|+")
		} else {
			b.WriteString("|-")
		}
	}
	return b.String()
}

// parse parses an ACL's match on the switch (cached across switches that
// resolve its references alike).
func (l *linter) parse(v *swView, a *aclInfo) (*expr.Expr, error) {
	if a.global != nil {
		return a.global, nil
	}
	key := v.refKey(a)
	if x, ok := l.exprCache.Load(key); ok {
		if e, ok := x.(*expr.Expr); ok {
			return e, nil
		}
		return nil, x.(error)
	}
	e, err := l.dialect.Parse(a.acl.Match, v.parseRes)
	if err != nil {
		l.exprCache.Store(key, err)
		return nil, err
	}
	l.exprCache.Store(key, e)
	return e, nil
}

// setOf returns the cube set of an instance's match on the switch.
func (l *linter) setOf(v *swView, in *inst) *set {
	if in.e == nil {
		return nil
	}
	if in.shared {
		in.sh.once.Do(func() {
			cv := &converter{d: l.dialect, r: v.res, as: l.as, cover: v.cover}
			in.set = cv.toSet(in.e.Root)
			in.hull = hull(in.set.over)
		})
		return in.set
	}
	if in.set != nil {
		return in.set
	}
	s, h := l.splitSet(v, in)
	if s == nil {
		cv := &converter{d: l.dialect, r: v.res, as: l.as, cover: v.cover}
		s = cv.toSet(in.e.Root)
		h = hull(s.over)
	}
	in.set, in.hull = s, h
	return in.set
}

// hullOf returns the hull of an instance's cubes from above on the switch
// (computed once, with its set).
func (l *linter) hullOf(v *swView, in *inst) cube {
	l.setOf(v, in)
	return in.hull
}

// splitSet converts a conjunctive match that references port groups in
// two parts: the terms without port groups once per ACL (shared by every
// switch), the others on this switch; nil when the match does not split.
// It returns the set's hull too.
func (l *linter) splitSet(v *swView, in *inst) (*set, cube) {
	if len(in.a.pgRefs) == 0 {
		return nil, nil
	}
	root := in.e.Root
	for {
		p, ok := root.(*expr.Paren)
		if !ok {
			break
		}
		root = p.X
	}
	b, ok := root.(*expr.Binary)
	if !ok || b.Or {
		return nil, nil
	}
	var sp *split
	var slot *atomic.Pointer[split]
	if in.a.idx < len(l.splits) { // else a test's linter: not cached
		slot = &l.splits[in.a.idx]
		sp = slot.Load()
	}
	if sp == nil || sp.terms != len(b.Terms) {
		sp = l.split(v, b)
		if slot != nil {
			slot.Store(sp)
		}
	}
	if sp.fixed == nil {
		return nil, nil
	}
	dyn, key := sp.dynTerm, sp.dynKey
	if sp.b != b { // another parse of the match: its own terms
		dyn = sp.dynOf(b)
		key = l.termKey(dyn)
	}
	ds, fs := v.dynSet(l, key, dyn), sp.fixed
	over, ok := andSetsIn(&v.arena, ds.over, fs.over)
	if !ok {
		return nil, nil
	}
	// The hull ignores string fields: when the port group terms are one
	// cube of string constraints that drops none of the others' cubes,
	// the product's hull is theirs.
	h := sp.hull
	if len(ds.over) != 1 || !strOnly(ds.over[0]) || len(over) != len(fs.over) {
		h = hull(over)
	}
	if fs.exact && ds.exact {
		// Both exact: under is over (toSet shares them too), and the
		// product, the bulk of a 50k-ACL lint's allocations, is built once.
		return v.arena.newSet(over, over, true), h
	}
	under, ok := andSetsIn(&v.arena, ds.under, fs.under)
	if !ok {
		return nil, nil
	}
	return v.arena.newSet(over, under, false), h
}

// strOnly reports whether c constrains only string fields.
func strOnly(c cube) bool {
	for _, f := range c {
		if f.str == nil {
			return false
		}
	}
	return true
}

// split is how a conjunctive match splits, the same on every switch (the
// terms that name port groups are the same): the set of the terms without
// port groups (nil when the match does not split) and the indexes of the
// others among its terms.
type split struct {
	fixed *set
	hull  cube // hull(fixed.over)
	dyn   []int
	terms int // the conjunction's number of terms
	// b is the conjunction split, dynTerm its port group terms (one node)
	// and dynKey their key in the switches' caches (dynSet).
	b       *expr.Binary
	dynTerm expr.Node
	dynKey  dynKey
}

// dynOf returns the port group terms of b (split like sp's) as one node.
func (sp *split) dynOf(b *expr.Binary) expr.Node {
	if len(sp.dyn) == 1 {
		return b.Terms[sp.dyn[0]]
	}
	ts := make([]expr.Node, len(sp.dyn))
	for k, t := range sp.dyn {
		ts[k] = b.Terms[t]
	}
	return &expr.Binary{Pos: ts[0].Position(), Terms: ts}
}

func (l *linter) split(v *swView, b *expr.Binary) *split {
	sp := &split{terms: len(b.Terms)}
	fixed, last := 0, 0
	for k, t := range b.Terms {
		if hasPGRef(t) {
			sp.dyn = append(sp.dyn, k)
		} else {
			fixed, last = fixed+1, k
		}
	}
	if fixed == 0 || len(sp.dyn) == 0 {
		return sp
	}
	cv := &converter{d: l.dialect, r: v.res, as: l.as}
	if fixed == 1 {
		sp.fixed = cv.toSet(b.Terms[last])
	} else { // the conjunction of the other terms, not built
		sp.fixed = cv.toSetTerms(b.Terms, sp.dyn)
	}
	sp.hull = hull(sp.fixed.over)
	sp.b, sp.dynTerm = b, sp.dynOf(b)
	sp.dynKey = l.termKey(sp.dynTerm)
	return sp
}

// dynSet converts the port group terms of a match on the switch, once
// per text: the ACLs of a port group mostly start with the same
// `inport == @pg' (sets are never modified once built).
func (v *swView) dynSet(l *linter, key dynKey, n expr.Node) *set {
	v.dynMu.Lock()
	defer v.dynMu.Unlock()
	if s, ok := v.dyn[key]; ok {
		return s
	}
	cv := &converter{d: l.dialect, r: v.res, as: l.as, cover: v.cover}
	s := cv.toSet(n)
	if v.dyn == nil {
		v.dyn = map[dynKey]*set{}
	}
	v.dyn[key] = s
	return s
}

// dynKey identifies a port group term: `field op @pg' by its parts (no
// text to build: most terms are of this form), any other by its text;
// the port group's name or the text as a number (linter.termID), so that
// the switches' caches hash no strings.
type dynKey struct {
	sym *expr.Symbol
	op  expr.Relop
	id  int32
}

// termKey returns the key of a port group term (once per ACL: split).
func (l *linter) termKey(n expr.Node) dynKey {
	if c, ok := n.(*expr.Cmp); ok && !c.Field.Sliced && len(c.Values.Values) == 1 && c.Values.Values[0].Kind == expr.PortGroupRef {
		return dynKey{sym: c.Field.Symbol, op: c.FieldOp(), id: l.termID(c.Values.Values[0].Str)}
	}
	return dynKey{id: l.termID("\x00" + n.String())} // no port group name starts with NUL
}

// termID numbers the strings termKey is given, in the order first seen.
func (l *linter) termID(s string) int32 {
	if x, ok := l.termIDs.Load(s); ok {
		return x.(int32)
	}
	x, _ := l.termIDs.LoadOrStore(s, l.nTermIDs.Add(1))
	return x.(int32)
}

func hasPGRef(n expr.Node) bool {
	switch n := n.(type) {
	case *expr.Cmp:
		return namesPG(n.Values)
	case *expr.Range:
		return namesPG(n.Low) || namesPG(n.High)
	case *expr.Binary:
		return slices.ContainsFunc(n.Terms, hasPGRef)
	case *expr.Not:
		return hasPGRef(n.X)
	case *expr.Paren:
		return hasPGRef(n.X)
	}
	return false
}

// namesPG reports whether cs names a port group.
func namesPG(cs expr.ConstSet) bool {
	for i := range cs.Values {
		if cs.Values[i].Kind == expr.PortGroupRef {
			return true
		}
	}
	return false
}

// neighbourOrder returns the views in breadth-first order over "shares a
// port group": the switches a port group spans are then linted close
// together, and release can drop its ACLs' cached sets soon after the
// first of them. The order does not change the report (findings are
// merged and sorted).
func neighbourOrder(views []*swView) []*swView {
	pgs := make([][]string, len(views)) // each view's port groups, sorted
	byPG := map[string][]int{}
	for i, v := range views {
		pgs[i] = slices.Sorted(maps.Keys(v.res.PortGroups))
		for _, pg := range pgs[i] {
			byPG[pg] = append(byPG[pg], i)
		}
	}
	out := make([]*swView, 0, len(views))
	done := make([]bool, len(views))
	for start := range views {
		if done[start] {
			continue
		}
		done[start] = true
		queue := []int{start}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			out = append(out, views[i])
			for _, pg := range pgs[i] {
				for _, j := range byPG[pg] {
					if !done[j] {
						done[j] = true
						queue = append(queue, j)
					}
				}
			}
		}
	}
	return out
}

// release drops the cached sets and the parse of the ACLs no switch still
// to be linted sees as its own once v is done.
func (l *linter) release(v *swView) {
	for _, in := range v.own {
		if l.uses[in.a.idx].Add(-1) == 0 {
			if in.a.idx < len(l.splits) {
				l.splits[in.a.idx].Store(nil)
			}
			in.a.global = nil
		}
	}
	v.arena.recycle()
	v.exact = nil
}

// A merger merges the findings of one ACL for one cause (rule and
// message) reported on several switches into one: the switches joined,
// the highest severity, the other ACLs each once. It is safe for
// concurrent use; the result does not depend on the order of add's calls.
type merger struct {
	mu  sync.Mutex
	idx map[mergeKey]int
	out []Finding
}

type mergeKey struct{ rule, acl, msg string }

// add merges fs into the findings so far.
func (m *merger) add(fs []Finding) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.idx == nil {
		m.idx = map[mergeKey]int{}
	}
	for _, f := range fs {
		k := mergeKey{f.Rule, f.ACLs[0].UUID, f.Message}
		i, ok := m.idx[k]
		if !ok {
			m.idx[k] = len(m.out)
			f.ACLs = slices.Clone(f.ACLs)
			f.Switches = slices.Clip(f.Switches) // often a class's names: append copies
			m.out = append(m.out, f)
			continue
		}
		o := &m.out[i]
		o.Switches = append(o.Switches, f.Switches...)
		if f.Severity > o.Severity {
			o.Severity = f.Severity
		}
		for _, a := range f.ACLs[1:] {
			if !slices.ContainsFunc(o.ACLs, func(b ACLRef) bool { return b.UUID == a.UUID }) {
				o.ACLs = append(o.ACLs, a)
			}
		}
	}
}

// result returns the merged findings, each with its other ACLs and its
// switches in order, in report order.
func (m *merger) result() []Finding {
	out := m.out
	for i := range out {
		rest := out[i].ACLs[1:]
		slices.SortFunc(rest, func(a, b ACLRef) int {
			if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
				return c
			}
			if c := cmpOrigin(a, b); c != 0 {
				return c
			}
			return strings.Compare(a.UUID, b.UUID)
		})
		slices.Sort(out[i].Switches)
		out[i].Switches = slices.Compact(out[i].Switches)
	}
	// Sorted by index (a Finding is 112 bytes), each comparison stopping
	// at the first key that differs.
	ord := make([]int32, len(out))
	for i := range ord {
		ord[i] = int32(i)
	}
	slices.SortFunc(ord, func(i, j int32) int {
		a, b := &out[i], &out[j]
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		if c := cmpOrigin(a.ACLs[0], b.ACLs[0]); c != 0 {
			return c
		}
		if c := strings.Compare(a.ACLs[0].UUID, b.ACLs[0].UUID); c != 0 {
			return c
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	sorted := make([]Finding, len(out))
	for k, i := range ord {
		sorted[k] = out[i]
	}
	return sorted
}

// cmpOrigin orders ACLs by where they were written: fixture rows by file,
// line and column, live rows by their origin text.
func cmpOrigin(a, b ACLRef) int {
	pa, pb := a.pos, b.pos
	if !pa.IsValid() {
		pa = nbschema.Position{File: a.Origin}
	}
	if !pb.IsValid() {
		pb = nbschema.Position{File: b.Origin}
	}
	if c := nbschema.ComparePositions(pa, pb); c != 0 {
		return c
	}
	return strings.Compare(a.Origin, b.Origin)
}

// collectRefs returns the address sets and port groups a parsed match
// references, each once, in order of appearance, with the offset of its
// first reference.
func collectRefs(root expr.Node) (as []string, asPos []int, pg []string, pgPos []int) {
	visit := func(cs expr.ConstSet) {
		for _, c := range cs.Values {
			switch c.Kind {
			case expr.AddressSetRef:
				if !slices.Contains(as, c.Str) {
					as, asPos = append(as, c.Str), append(asPos, c.Pos)
				}
			case expr.PortGroupRef:
				if !slices.Contains(pg, c.Str) {
					pg, pgPos = append(pg, c.Str), append(pgPos, c.Pos)
				}
			}
		}
	}
	expr.Inspect(root, func(n expr.Node) bool {
		switch n := n.(type) {
		case *expr.Cmp:
			visit(n.Values)
		case *expr.Range:
			visit(n.Low)
			visit(n.High)
		}
		return true
	})
	return as, asPos, pg, pgPos
}

func intp(i int) *int { return &i }
