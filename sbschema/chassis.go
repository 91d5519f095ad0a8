package sbschema

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/aclc/aclc/internal/ovsdbconn"
)

// LoadChassisFeatures reads the SB Chassis table and returns which of the
// chassis features in names every chassis of the local availability zone
// has, as northd's build_chassis_features decides them: a chassis lacks a
// feature unless its other_config sets it to true; chassis with
// other_config:is-remote=true are not counted; with no chassis every
// feature is present.
func LoadChassisFeatures(ctx context.Context, opts ovsdbconn.Options, names []string) (map[string]bool, error) {
	var rows []struct {
		OtherConfig ovsdbMap `json:"other_config"`
	}
	if err := selectAll(ctx, opts, "Chassis", []string{"other_config"}, &rows, ""); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, r := range rows {
		if isTrue(r.OtherConfig["is-remote"]) {
			continue
		}
		for _, n := range names {
			if !isTrue(r.OtherConfig[n]) {
				have[n] = false
			}
		}
	}
	return have, nil
}

// isTrue is smap_get_bool's reading of a value with default false:
// "true" in any case.
func isTrue(v string) bool { return strings.EqualFold(v, "true") }

// ovsdbMap is an OVSDB string-to-string map in the wire format
// ["map", [[k, v], ...]].
type ovsdbMap map[string]string

func (m *ovsdbMap) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw[1], &pairs); err != nil {
		return err
	}
	*m = make(ovsdbMap, len(pairs))
	for _, p := range pairs {
		(*m)[p[0]] = p[1]
	}
	return nil
}
