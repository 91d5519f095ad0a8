package release

import (
	"fmt"
	"strings"
)

// NorthdVersionKey is the NB_Global option in which every northd run
// records its exact version ("25.03.3-20.41.0-78.9").
const NorthdVersionKey = "northd_internal_version"

// NorthdVersion is NB_Global options:northd_internal_version, which
// northd writes on every run: VERSION-SBSCHEMA-NACTIONS.MINOR
// ("25.03.3-20.41.0-78.9"; ovn_get_internal_version).
type NorthdVersion struct {
	Raw      string
	Version  Version // 25.03.3
	SBSchema string  // 20.41.0
}

// ParseNorthdVersion parses s. Only the version and the SB schema version
// are read; what follows them (the action count of ovn-controller's
// protocol) may be anything.
func ParseNorthdVersion(s string) (NorthdVersion, error) {
	nv := NorthdVersion{Raw: s}
	parts := strings.SplitN(s, "-", 3)
	v, err := ParseVersion(parts[0])
	if err != nil || v.IsSeries() || strings.HasPrefix(parts[0], "v") {
		return nv, fmt.Errorf("NB_Global options:%s %q: want VERSION-SBSCHEMA-..., e.g. 25.03.3-20.41.0-78.9 (pin the version with --ovn-version)", NorthdVersionKey, s)
	}
	nv.Version = v
	if len(parts) > 1 {
		nv.SBSchema = parts[1]
	}
	return nv, nil
}

// Detection is which release an NB belongs to, and how aclc knows.
type Detection struct {
	Release *Release
	// How says where the version came from, for messages: "NB_Global
	// options:northd_internal_version 25.03.3-20.41.0-78.9".
	How string
	// Notes are what aclc assumed or found odd, to print on stderr.
	Notes []string
}

// Detect settles the release of an NB whose schema has version nbSchema
// and whose NB_Global options:northd_internal_version is northd ("" when
// absent). The northd version comes first: it is exact. Without one (no
// northd has run on the NB) the schema gives the series, and the newest
// verified version of it is assumed, with a note saying so. A version
// aclc cannot vouch for is an *UnknownReleaseError. override
// (--ovn-version) wins, with a note when it disagrees with the NB (not
// when the NB only names a series, no northd having run, and override is
// of that series).
func Detect(nbSchema, northd string, override *Release) (Detection, error) {
	d, err := detect(nbSchema, northd)
	if override == nil {
		return d, err
	}
	o := Detection{Release: override, How: "--ovn-version " + override.Name()}
	switch {
	case err != nil:
		o.Notes = append(o.Notes, fmt.Sprintf("--ovn-version %s overrides the NB's own version, which aclc cannot use (%v)", override.Name(), err))
	case northd == "" && d.Release.Series() == override.Series():
		// No northd has run: the NB only names its series, and the
		// override picks a version of it (no disagreement to note).
	case d.Release.Version != override.Version:
		o.Notes = append(o.Notes, fmt.Sprintf("--ovn-version %s overrides the NB's %s (%s)", override.Name(), d.Release.Name(), d.How))
	}
	return o, nil
}

func detect(nbSchema, northd string) (Detection, error) {
	if northd != "" {
		nv, err := ParseNorthdVersion(northd)
		if err != nil {
			return Detection{}, err
		}
		r, err := lookup(nv.Version)
		if err != nil {
			return Detection{}, fmt.Errorf("the NB was last served by ovn-northd %s (NB_Global options:%s %q): %w", nv.Version, NorthdVersionKey, northd, err)
		}
		d := Detection{Release: r, How: fmt.Sprintf("NB_Global options:%s %s", NorthdVersionKey, northd)}
		if nbSchema != "" && nbSchema != r.NBSchema {
			d.Notes = append(d.Notes, fmt.Sprintf("the NB's schema is %s, but ovn-northd %s was built for %s (an upgrade in progress?); compiling as %s",
				nbSchema, r.Name(), r.NBSchema, r.Name()))
		}
		if nv.SBSchema != "" && nv.SBSchema != r.SBSchema {
			d.Notes = append(d.Notes, fmt.Sprintf("ovn-northd %s reports SB schema %s, upstream %s has %s (a patched build?)",
				r.Name(), nv.SBSchema, r.Name(), r.SBSchema))
		}
		return d, nil
	}
	r, err := ByNBSchema(nbSchema)
	if err != nil {
		return Detection{}, err
	}
	return Detection{Release: r, How: "NB schema " + nbSchema,
		Notes: []string{fmt.Sprintf("no ovn-northd has run on this NB (NB_Global options:%s is unset): assuming %s, the newest %s aclc verified (NB schema %s); pin another with --ovn-version VERSION (aclc releases lists them)",
			NorthdVersionKey, r.Name(), r.Series(), nbSchema)}}, nil
}
