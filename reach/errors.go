package reach

import "fmt"

// InputError is a question reach cannot answer as asked: an unknown
// port, ports of two switches, from == to. The CLI exits 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// NotExactError says that no part of a pair can be stated exactly: the
// switch or a port has what reach does not execute (the package comment
// lists it).
type NotExactError struct {
	Switch, From, To string
	Reason           string
}

func (e *NotExactError) Error() string {
	return fmt.Sprintf("switch %s, %s -> %s: not exact: %s", e.Switch, e.From, e.To, e.Reason)
}
