package pset

import "fmt"

// This file holds the operations on the string fields (inport, outport,
// remote_outport): the sets of their values and their assignment, as a
// switch's pipeline sets outport at its L2 lookup.

// PortFields returns the space's string fields in variable order.
func (sp *Space) PortFields() []string {
	var out []string
	for _, f := range sp.fields {
		if f.ports != nil {
			out = append(out, f.name)
		}
	}
	return out
}

// portField returns string field name and the code of port: a port of
// the domain, or "" for the other port (a port the domain does not list,
// or none at all: outport before the L2 lookup sets it).
func (sp *Space) portField(name, port string) (*field, uint64, error) {
	f := sp.byName[name]
	if f == nil || f.ports == nil {
		return nil, 0, fmt.Errorf("pset: %q is not a string field of the space", name)
	}
	if port == "" {
		return f, uint64(len(f.ports)), nil
	}
	c, ok := f.code[port]
	if !ok {
		return nil, 0, fmt.Errorf("pset: %q is not a port of the domain", port)
	}
	return f, c, nil
}

// PortIs returns the set where string field name is port ("" for the
// other port).
func (m *Manager) PortIs(name, port string) (Set, error) {
	f, c, err := m.space.portField(name, port)
	if err != nil {
		return Empty, err
	}
	return m.And(m.portIs(f, c), m.univ), nil
}

// AssignPort returns the packets of s after `name = port;' ("" for the
// other port): the field forgotten, then port.
func (m *Manager) AssignPort(s Set, name, port string) (Set, error) {
	f, c, err := m.space.portField(name, port)
	if err != nil {
		return Empty, err
	}
	return m.And(m.Exists(s, Bits{f: f, N: f.width}), m.portIs(f, c)), nil
}
