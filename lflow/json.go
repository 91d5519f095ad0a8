package lflow

import (
	"encoding/json"
	"fmt"
	"io"
)

type jsonListing struct {
	Datapaths []jsonDatapath `json:"datapaths"`
}

type jsonDatapath struct {
	Name  string     `json:"name"`
	Name2 string     `json:"name2,omitempty"`
	UUID  string     `json:"uuid"`
	Flows []JSONFlow `json:"flows"`
}

// JSONFlow is the JSON shape of a flow, the one WriteJSON and aclc watch's
// --deltas records use.
type JSONFlow struct {
	Pipeline string `json:"pipeline"`
	Table    int    `json:"table"`
	Stage    string `json:"stage"`
	Priority int    `json:"priority"`
	Match    string `json:"match"`
	Actions  string `json:"actions"`
	Source   string `json:"source,omitempty"`
}

// ToJSON returns f in its JSON shape.
func (f Flow) ToJSON() JSONFlow {
	return JSONFlow{Pipeline: f.Stage.Pipeline().String(), Table: f.Stage.Table(), Stage: f.Stage.Name(),
		Priority: f.Priority, Match: f.Match, Actions: f.Actions, Source: f.Source}
}

// WriteJSON writes l as one JSON document:
//
//	{"datapaths":[{"name":"sw0","uuid":"...","flows":[{"pipeline":"ingress",
//	  "table":8,"stage":"ls_in_acl","priority":2002,"match":"...",
//	  "actions":"...","source":"<NB row uuid>"}]}]}
func WriteJSON(w io.Writer, l *Listing) error {
	out := jsonListing{Datapaths: make([]jsonDatapath, 0, len(l.Datapaths))}
	for _, d := range l.Datapaths {
		jd := jsonDatapath{Name: d.Name, Name2: d.Name2, UUID: d.UUID, Flows: make([]JSONFlow, 0, len(d.Flows))}
		for _, f := range d.Flows {
			jd.Flows = append(jd.Flows, f.ToJSON())
		}
		out.Datapaths = append(out.Datapaths, jd)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// ParseJSON reads a listing written by WriteJSON.
func ParseJSON(name string, r io.Reader) (*Listing, error) {
	var in jsonListing
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &Listing{}
	fit := NewLayoutFit(nil)
	for i, jd := range in.Datapaths {
		d := &Datapath{Name: jd.Name, Name2: jd.Name2, UUID: jd.UUID}
		for j, jf := range jd.Flows {
			p := Ingress
			switch jf.Pipeline {
			case "ingress":
			case "egress":
				p = Egress
			default:
				return nil, fmt.Errorf("%s: datapaths[%d].flows[%d]: unknown pipeline %q", name, i, j, jf.Pipeline)
			}
			kind, err := fit.Add(jf.Stage, p, jf.Table)
			if err != nil {
				return nil, fmt.Errorf("%s: datapaths[%d].flows[%d]: %v", name, i, j, err)
			}
			d.Flows = append(d.Flows, Flow{Stage: kind, Priority: jf.Priority, Match: jf.Match, Actions: jf.Actions, Source: jf.Source})
		}
		l.Datapaths = append(l.Datapaths, d)
	}
	fit.Place(l)
	return l, nil
}

// Parse reads a listing in either format, deciding by its first non-blank
// byte ('{' is JSON).
func Parse(name string, data []byte) (*Listing, error) {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return ParseJSON(name, bytesReader(data))
		}
		break
	}
	return ParseText(name, bytesReader(data))
}
