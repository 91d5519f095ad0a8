package nbschema

import (
	"cmp"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/release"
)

// ovnRelease decodes the top-level `ovn:` key: the OVN release the fixture
// is for ("26.03", "23.03.1").
func (b *builder) ovnRelease(f fields) {
	name, ok := b.scalarString(f.at("ovn"), "ovn")
	if !ok {
		return
	}
	r, err := release.Lookup(name)
	if err != nil {
		b.errorf(f.at("ovn"), "ovn", "%v", err)
		return
	}
	b.snap.Release = r
}

// needs records that the fixture uses feature f at node n.
func (b *builder) needs(f *release.Fact, n *yaml.Node, path string) {
	b.uses = append(b.uses, featureUse{feature: f, node: n, path: path})
}

// checkFeatures settles the fixture's release — override (--ovn-version),
// else its `ovn:` key, else release.Default() — and reports every use of a
// feature that release lacks, at its position.
func (b *builder) checkFeatures(override *release.Release, from string) {
	r, why := b.snap.Release, "its ovn: key"
	switch {
	case override != nil:
		r, why = override, cmp.Or(from, "--ovn-version")
		b.snap.Release = r
	case r == nil:
		r, why = release.Default(), "the default; set ovn: or --ovn-version for another release"
		b.snap.Release = r
	}
	b.snap.ReleaseFrom = why
	for _, u := range b.uses {
		if err := r.Check(u.feature); err != nil {
			b.errorf(u.node, u.path, "%v (the fixture is for OVN %s: %s)", err, r.Name(), why)
		}
	}
}
