package release

import "fmt"

// Feature is an NB input that the ACL stages read in some releases and not
// in older ones: a column, a table, an action or an option key. A release
// has a feature when it is at least the version that introduced it
// (Since), which need not be a supported release itself (tiers came in
// 23.06).
type Feature uint8

// The features of the ACL stages newer than 23.03, oldest first. Each
// Since is the first upstream release whose NB schema or northd.c has it
// (checked at the tags of the OVN repository).
const (
	// ACLTier is ACL column tier (0..3).
	ACLTier Feature = iota
	// ACLPass is the ACL action "pass".
	ACLPass
	// RouterPortACL is Logical_Switch_Port options:enable_router_port_acl.
	RouterPortACL
	// ACLSample is ACL columns sample_new and sample_est and the tables
	// Sample, Sample_Collector and Sampling_App.
	ACLSample
	// SwitchPort is Logical_Switch_Port type "switch" and its column peer
	// (spine-leaf switches connected port to port).
	SwitchPort
	// PersistEstablished is ACL options:persist-established.
	PersistEstablished
	// StatelessACLWithLB is Logical_Switch
	// other_config:enable-stateless-acl-with-lb.
	StatelessACLWithLB
	// NetworkFunction is ACL column network_function_group and the tables
	// Network_Function, Network_Function_Group and
	// Network_Function_Health_Check.
	NetworkFunction
	// ACLCtTranslation is NB_Global options:acl_ct_translation.
	ACLCtTranslation
	numFeatures
)

type featureInfo struct {
	name  string  // what a user writes, for messages
	since Version // the upstream release that introduced it
}

var features = [numFeatures]featureInfo{
	ACLTier:            {"ACL column tier", MustVersion("23.06.0")},
	ACLPass:            {`ACL action "pass"`, MustVersion("23.06.0")},
	RouterPortACL:      {"Logical_Switch_Port options:enable_router_port_acl", MustVersion("24.03.0")},
	ACLSample:          {"ACL sampling (sample_new, sample_est; Sample, Sample_Collector, Sampling_App)", MustVersion("24.09.0")},
	SwitchPort:         {`Logical_Switch_Port type "switch" (and its column peer)`, MustVersion("25.03.0")},
	PersistEstablished: {"ACL options:persist-established", MustVersion("25.03.0")},
	StatelessACLWithLB: {"Logical_Switch other_config:enable-stateless-acl-with-lb", MustVersion("25.09.0")},
	NetworkFunction:    {"network functions (ACL network_function_group; Network_Function, Network_Function_Group, Network_Function_Health_Check)", MustVersion("26.03.0")},
	ACLCtTranslation:   {"NB_Global options:acl_ct_translation", MustVersion("26.03.0")},
}

// Features returns every feature, oldest first.
func Features() []Feature {
	out := make([]Feature, numFeatures)
	for i := range out {
		out[i] = Feature(i)
	}
	return out
}

// Name says what the feature is in NB terms ("ACL column tier").
func (f Feature) Name() string {
	if f >= numFeatures {
		return fmt.Sprintf("feature(%d)", f)
	}
	return features[f].name
}

// String is Name.
func (f Feature) String() string { return f.Name() }

// Since is the upstream release that introduced the feature (23.06.0).
func (f Feature) Since() Version { return features[f].since }

// Has reports whether release r has feature f.
func (r *Release) Has(f Feature) bool { return r.Version.Compare(f.Since()) >= 0 }

// Check returns a *FeatureError when r lacks f, else nil.
func (r *Release) Check(f Feature) error {
	if r.Has(f) {
		return nil
	}
	return &FeatureError{Feature: f, Release: r}
}

// FeatureError is a use of a feature the chosen release lacks.
type FeatureError struct {
	Feature Feature
	Release *Release
}

func (e *FeatureError) Error() string {
	return fmt.Sprintf("%s came in OVN %s; OVN %s does not have it", e.Feature.Name(), e.Feature.Since().Series(), e.Release.Name())
}
