package reach

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// This file answers many pairs at once: every ordered pair of distinct
// ports of two endpoint lists, the pairs of one switch sharing its model
// (ReachFrom).

// Path is how a pair's packets could get from one port to the other.
type Path string

// The paths.
const (
	// SameSwitch: both ports are on one logical switch.
	SameSwitch Path = "switch"
	// Routed: the ports are on two switches that logical routers join.
	Routed Path = "routed"
	// NoPath: the ports are on two switches no logical router joins: no
	// packet of one reaches the other.
	NoPath Path = "none"
)

// Outcome is the answer for one ordered pair.
type Outcome struct {
	From, To             string
	FromSwitch, ToSwitch string // the switches' names
	Path                 Path
	// Result holds the pair's parts when it was executed.
	Result *Result
	// NotExact says why the pair as a whole is not exact (Result is nil).
	NotExact *NotExactError
}

// Exact reports whether every part of the outcome is exact.
func (o *Outcome) Exact() bool {
	if o.NotExact != nil {
		return false
	}
	if o.Result != nil {
		for _, p := range o.Result.Parts {
			if p.Verdict == NotExact {
				return false
			}
		}
	}
	return true
}

// RoutedReason is why a pair of ports on two switches joined by routers is
// not exact.
const RoutedReason = "the ports are on switches joined by logical routers: reach executes the ACL stages of one switch and does not execute a routed path yet (the source switch's egress to its router port, the router, the destination switch's ingress from its router port)"

// CountPairs is how many ordered pairs of distinct ports froms and tos
// make (what Pairs answers).
func CountPairs(froms, tos []string) int {
	in := make(map[string]bool, len(tos))
	for _, t := range tos {
		in[t] = true
	}
	n := 0
	for _, f := range froms {
		n += len(tos)
		if in[f] {
			n--
		}
	}
	return n
}

// Pairs answers every ordered pair (from, to) of distinct ports, from in
// froms and to in tos (port names, as Endpoints returns them), calling
// each with the outcomes in this order: by the name of from's switch,
// then in froms' order, then in tos'. The pairs of one from port on its
// own switch go through ReachFrom, and the froms of one switch share
// its model, which the engine drops once they are done (so that the
// memory of a run over many switches is that of one); pairs on two
// switches are Routed (not exact, RoutedReason) or NoPath. An error of
// each stops the walk and is returned.
func (e *Engine) Pairs(froms, tos []string, opt Options, each func(*Outcome) error) error {
	join := e.joined()
	bySwitch := map[string][]string{}
	var sws []string
	for _, from := range froms {
		fid, ok := e.view.PortByName(from)
		if !ok {
			return inputErrorf("unknown port %q", from)
		}
		sw := e.view.PortSwitch(fid)
		if bySwitch[sw] == nil {
			sws = append(sws, sw)
		}
		bySwitch[sw] = append(bySwitch[sw], from)
	}
	slices.SortFunc(sws, func(a, b string) int {
		return cmp.Or(cmp.Compare(e.snap.Switches[a].Name, e.snap.Switches[b].Name), cmp.Compare(a, b))
	})
	for _, sw := range sws {
		for _, from := range bySwitch[sw] {
			if err := e.pairsFrom(from, sw, tos, join, opt, each); err != nil {
				return err
			}
		}
		delete(e.models, sw)
	}
	return nil
}

// pairsFrom answers the pairs of port from, on switch fsw, with tos.
func (e *Engine) pairsFrom(from, fsw string, tos []string, join map[string]string, opt Options, each func(*Outcome) error) error {
	outs := make([]*Outcome, 0, len(tos))
	var local []string
	var localAt []int
	for _, to := range tos {
		if to == from {
			continue
		}
		tid, ok := e.view.PortByName(to)
		if !ok {
			return inputErrorf("unknown port %q", to)
		}
		tsw := e.view.PortSwitch(tid)
		o := &Outcome{From: from, To: to, FromSwitch: e.snap.Switches[fsw].Name, ToSwitch: e.snap.Switches[tsw].Name}
		switch {
		case tsw == fsw:
			o.Path = SameSwitch
			local = append(local, to)
			localAt = append(localAt, len(outs))
		case join[tsw] == join[fsw]:
			o.Path = Routed
			o.NotExact = &NotExactError{Switch: o.FromSwitch + "," + o.ToSwitch, From: from, To: to, Reason: RoutedReason}
		default:
			o.Path = NoPath
		}
		outs = append(outs, o)
	}
	if len(local) > 0 {
		rs, errs := e.ReachFrom(from, local, opt)
		for i, at := range localAt {
			var ne *NotExactError
			switch err := errs[i]; {
			case err == nil:
				outs[at].Result = rs[i]
			case errors.As(err, &ne):
				outs[at].NotExact = ne
			default:
				return fmt.Errorf("%s -> %s: %w", from, local[i], err)
			}
		}
	}
	for _, o := range outs {
		if err := each(o); err != nil {
			return err
		}
	}
	return nil
}
