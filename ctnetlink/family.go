package ctnetlink

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Family is a layer-3 protocol family as ctnetlink's nfgenmsg carries it.
type Family uint8

// Families a zone operation can be restricted to.
const (
	// FamilyAny means both IPv4 and IPv6 (AF_UNSPEC).
	FamilyAny Family = unix.AF_UNSPEC
	// FamilyIPv4 is AF_INET.
	FamilyIPv4 Family = unix.AF_INET
	// FamilyIPv6 is AF_INET6.
	FamilyIPv6 Family = unix.AF_INET6
)

// ParseFamily parses "ipv4", "ipv6" or "any" (also "" and "unspec").
func ParseFamily(s string) (Family, error) {
	switch s {
	case "ipv4", "inet", "4":
		return FamilyIPv4, nil
	case "ipv6", "inet6", "6":
		return FamilyIPv6, nil
	case "any", "", "unspec":
		return FamilyAny, nil
	}
	return 0, fmt.Errorf("unknown family %q (want ipv4, ipv6 or any)", s)
}

// String returns "ipv4", "ipv6", "any" or the number.
func (f Family) String() string {
	switch f {
	case FamilyIPv4:
		return "ipv4"
	case FamilyIPv6:
		return "ipv6"
	case FamilyAny:
		return "any"
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// matches reports whether an entry of family e is selected by f.
func (f Family) matches(e Family) bool { return f == FamilyAny || f == e }
