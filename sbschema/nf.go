package sbschema

import (
	"context"
	"encoding/json"

	"github.com/aclc/aclc/internal/ovsdbconn"
)

// NFState is what northd's network_function_update_active reads of the SB
// (26.03+): each logical port's binding and the health of the network
// functions' service monitors.
type NFState struct {
	// Ports are the Port_Binding rows by logical_port.
	Ports map[string]PortBinding
	// MonitorOnline holds the logical ports whose Service_Monitor of type
	// "network-function" (protocol icmp, port 0: the one northd creates
	// for a function's outport) has status "online".
	MonitorOnline map[string]bool
}

// PortBinding is a Port_Binding's chassis (the Chassis row's UUID, "" for
// none) and column up (unset is false, as northd reads it).
type PortBinding struct {
	Chassis string
	Up      bool
}

// LoadNFState reads the SB Port_Binding (logical_port, chassis, up) and
// Service_Monitor tables, in two raw selects of those columns only.
func LoadNFState(ctx context.Context, opts ovsdbconn.Options) (*NFState, error) {
	var pbs []struct {
		LogicalPort string       `json:"logical_port"`
		Chassis     ovsdbOptRef  `json:"chassis"`
		Up          ovsdbOptBool `json:"up"`
	}
	if err := selectAll(ctx, opts, "Port_Binding", []string{"logical_port", "chassis", "up"}, &pbs, ""); err != nil {
		return nil, err
	}
	var mons []struct {
		Type        ovsdbOptString `json:"type"`
		LogicalPort string         `json:"logical_port"`
		Protocol    ovsdbOptString `json:"protocol"`
		Port        int            `json:"port"`
		Status      ovsdbOptString `json:"status"`
	}
	if err := selectAll(ctx, opts, "Service_Monitor", []string{"type", "logical_port", "protocol", "port", "status"}, &mons, ""); err != nil {
		return nil, err
	}
	st := &NFState{Ports: make(map[string]PortBinding, len(pbs)), MonitorOnline: map[string]bool{}}
	for _, pb := range pbs {
		st.Ports[pb.LogicalPort] = PortBinding{Chassis: string(pb.Chassis), Up: bool(pb.Up)}
	}
	for _, m := range mons {
		if m.Type == "network-function" && m.Protocol == "icmp" && m.Port == 0 && m.Status == "online" {
			st.MonitorOnline[m.LogicalPort] = true
		}
	}
	return st, nil
}

// ovsdbOptRef is an optional UUID reference: ["uuid", U] or an empty set.
type ovsdbOptRef string

func (r *ovsdbOptRef) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var tag string
	if err := json.Unmarshal(raw[0], &tag); err != nil {
		return err
	}
	if tag == "uuid" {
		var u string
		if err := json.Unmarshal(raw[1], &u); err != nil {
			return err
		}
		*r = ovsdbOptRef(u)
		return nil
	}
	*r = "" // ["set", []]
	return nil
}

// ovsdbOptBool is an optional boolean: true, false or an empty set (false).
type ovsdbOptBool bool

func (v *ovsdbOptBool) UnmarshalJSON(b []byte) error {
	var x bool
	if json.Unmarshal(b, &x) == nil {
		*v = ovsdbOptBool(x)
		return nil
	}
	*v = false // ["set", []]
	return nil
}

// ovsdbOptString is an optional string: a string or an empty set ("").
type ovsdbOptString string

func (v *ovsdbOptString) UnmarshalJSON(b []byte) error {
	var x string
	if json.Unmarshal(b, &x) == nil {
		*v = ovsdbOptString(x)
		return nil
	}
	*v = "" // ["set", []]
	return nil
}
