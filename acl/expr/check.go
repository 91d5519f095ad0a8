package expr

// Warning is a dubious construct that OVN accepts.
type Warning struct {
	Pos  int
	Kind WarningKind
	Msg  string
}

// WarningKind classifies warnings.
type WarningKind string

func check(n Node, t Symtab, r Resolver) []Warning { return nil }
