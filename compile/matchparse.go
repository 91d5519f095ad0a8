package compile

import (
	"sync"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// A MatchParser parses ACL matches with a release's parser ahead of
// ValidateMatchesWith, on a goroutine of its own: `aclc compile --nb` hands
// it each ACL as the NB reply is decoded, so that the parse (the larger part
// of the validation) runs on the core the decoder leaves idle instead of
// after the read. Add is called from one goroutine; Wait once, after the
// last Add.
type MatchParser struct {
	r       *release.Release
	d       *expr.Dialect
	batch   []string
	batches chan []string
	wg      sync.WaitGroup
	mu      sync.Mutex
	parsed  map[string]error // by match text: nil for a valid match
	done    bool
}

// matchBatch is how many matches Add hands over at a time.
const matchBatch = 256

// NewMatchParser starts a MatchParser for release r.
func NewMatchParser(r *release.Release) *MatchParser {
	p := &MatchParser{r: r, d: Dialect(r), batches: make(chan []string, 1024), parsed: map[string]error{}}
	p.wg.Add(1)
	go p.work()
	return p
}

// Add queues acl's match (unless blank: Compile reports those) for parsing.
func (p *MatchParser) Add(acl *nbdb.ACL) {
	if blank(acl.Match) {
		return
	}
	p.batch = append(p.batch, acl.Match)
	if len(p.batch) == matchBatch {
		p.batches <- p.batch
		p.batch = make([]string, 0, matchBatch)
	}
}

// Wait parses what is still queued, on a second goroutine too, and returns
// when every match added is parsed.
func (p *MatchParser) Wait() {
	if p.done {
		return
	}
	p.done = true
	if len(p.batch) > 0 {
		p.batches <- p.batch
		p.batch = nil
	}
	close(p.batches)
	p.wg.Add(1)
	go p.work()
	p.wg.Wait()
}

func (p *MatchParser) work() {
	defer p.wg.Done()
	errs := make([]error, matchBatch)
	for b := range p.batches {
		for i, m := range b {
			errs[i] = p.d.Valid(m, nil)
		}
		p.mu.Lock()
		for i, m := range b {
			p.parsed[m] = errs[i]
		}
		p.mu.Unlock()
	}
}

// result returns the parse of match by release r, if p parsed it for r.
func (p *MatchParser) result(r *release.Release, match string) (err error, ok bool) {
	if p == nil || p.r != r {
		return nil, false
	}
	err, ok = p.parsed[match]
	return err, ok
}
