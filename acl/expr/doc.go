// Package expr implements OVN's logical-flow match language, the language
// of ACL matches, as each supported release speaks it: a lexer and
// recursive-descent parser that accept exactly what OVN's lib/lex.c and
// lib/expr.c accept (with OVN's error messages plus a byte offset), each
// release's symbol table of lib/logical-fields.c, warnings for
// dubious-but-accepted constructs, and an evaluator with ovn-trace's
// semantics over a Microflow.
//
// Parse, Valid and ParseMicroflow speak 23.03.1; a Dialect speaks another
// version: 23.03's table and rules plus the named Changes that version has
// (dialect.go). Which version has which change is aclc's package release's
// to say (compile.Dialect maps a release onto a dialect); this package
// only names them.
//
// Parse returns an *Expr whose Root is a tree of Nodes (Binary, Not, Paren,
// Bool, FieldTest, Cmp, Range, ChassisResident). Every node records its byte
// offset and prints back with String; printing is canonical, so
// Parse(e.String()).String() == e.String().
//
// $address_set and @port_group references are resolved through a Resolver;
// a nil Resolver assumes every reference exists. MapResolver is one backed
// by maps; nbview's View.Resolver builds the one ovn-controller would see on
// one logical switch from an NB snapshot. The package needs the standard
// library only.
//
// Eval evaluates an expression against a Microflow the way ovn-trace does:
// prerequisites are ANDed into every comparison (and are not negated by
// `!'), predicates expand, sets resolve. A Microflow can be filled field by
// field (Set("reg0[16]", 1), Set("ip4.src", "10.0.0.1")) or from an
// ovn-trace style description with ParseMicroflow.
//
// The behaviour is pinned by oracle tests against the real OVN binaries:
// testdata/corpus/RELEASE.txt (the same expressions labelled by each
// supported release's ovn-trace flow parser) and testdata/eval.txt
// (expression × microflow results from 23.03's ovn-trace); see
// docs/match-language.md.
package expr
