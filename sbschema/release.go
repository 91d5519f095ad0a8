package sbschema

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/release"
)

// Release is the OVN release of a live SB, from its schema version.
type Release struct {
	// Remote is the SB remote that answered.
	Remote string
	// Schema is the version its OVN_Southbound schema reports ("21.8.0").
	Schema string
	// Release is the supported release with that SB schema, nil when none
	// has it.
	Release *release.Release
}

// DetectRelease connects to the SB of opts and returns the release its
// schema version belongs to. An unreachable SB is an error; a schema
// version no supported release has is not (Release is nil): the caller
// decides.
func DetectRelease(ctx context.Context, opts ovsdbconn.Options) (Release, error) {
	c, remote, err := ovsdbconn.DialRaw(ctx, sbTarget, opts)
	if err != nil {
		return Release{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(opts.TimeoutOrDefault()))
	res, err := ovsdbconn.Call(c, "get_schema", []any{sbTarget.DB})
	if err != nil {
		return Release{}, fmt.Errorf("SB at %s: get_schema: %w", remote, err)
	}
	var s struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(res, &s); err != nil {
		return Release{}, fmt.Errorf("SB at %s: get_schema reply: %w", remote, err)
	}
	r, _ := release.BySBSchema(s.Version)
	return Release{Remote: remote, Schema: s.Version, Release: r}, nil
}

// Check says whether the SB fits release want (the NB's): an error naming
// both when the SB's schema is another release's or none's.
func (r Release) Check(want *release.Release) error {
	switch {
	case r.Schema == want.SBSchema:
		return nil
	case r.Release == nil:
		return fmt.Errorf("SB at %s: %w; the NB is OVN %s's (SB schema %s)", r.Remote,
			&release.UnknownSBSchemaError{Version: r.Schema}, want.Name(), want.SBSchema)
	default:
		return fmt.Errorf("SB at %s is OVN %s's (SB schema %s), but the NB is compiled for OVN %s (SB schema %s): the SB belongs to another OVN central",
			r.Remote, r.Release.Series(), r.Schema, want.Name(), want.SBSchema)
	}
}
