package pset

import "fmt"

// NotExactError says that a match's set cannot be stated exactly in the
// space: the conversion gives no set rather than an approximation.
type NotExactError struct {
	Pos    int    // byte offset of the construct in the match
	Reason string // why, e.g. "is_chassis_resident depends on the chassis"
}

func (e *NotExactError) Error() string {
	return fmt.Sprintf("offset %d: not exact: %s", e.Pos, e.Reason)
}

// notExact aborts a conversion (recovered by Converter.Convert).
func notExact(pos int, format string, args ...any) {
	panic(&NotExactError{Pos: pos, Reason: fmt.Sprintf(format, args...)})
}
