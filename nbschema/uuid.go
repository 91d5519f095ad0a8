package nbschema

import (
	"github.com/google/uuid"
)

// uuidNamespace is the UUIDv5 namespace of the UUIDs derived for fixture
// rows that do not give their own.
var uuidNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/aclc/aclc/nbschema/fixture"))

// DerivedUUID returns the UUID a fixture row of table gets when it gives
// none: a name-based (version 5, SHA-1) UUID of the table name and key, so
// the same fixture always yields the same UUIDs. key is the row's name
// (switches, ports, port groups, address sets, load balancers, groups,
// meters, copps, named DHCP options and DNS rows), or the owner and
// position for rows without a name ("Logical_Switch sw0 acls 3",
// "Meter m1 bands 0", "DHCP_Options #2"), or "" for NB_Global.
func DerivedUUID(table, key string) string {
	return uuid.NewSHA1(uuidNamespace, []byte(table+"\x00"+key)).String()
}

// canonicalUUID reports whether s is a UUID in the canonical lower-case
// 8-4-4-4-12 form OVSDB prints.
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
