package nbschema

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// decoder walks a fixture's yaml.Node tree, collecting located errors.
type decoder struct {
	file string
	errs FixtureErrors
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &FixtureError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) pos(n *yaml.Node) string {
	return fmt.Sprintf("%s:%d:%d", d.file, n.Line, n.Column)
}

// fields is the decoded content of one YAML mapping: value nodes by key.
type fields struct {
	node *yaml.Node
	path string
	val  map[string]*yaml.Node
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!null":
			return "null"
		}
		return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "something else"
}

// resolve follows YAML aliases so that anchors can be reused.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapping checks that n is a mapping whose keys are all in allowed, without
// duplicates, and returns its fields. A null node is an empty mapping. ok
// is false when n is not a mapping at all.
func (d *decoder) mapping(n *yaml.Node, path string, allowed ...string) (f fields, ok bool) {
	f = fields{node: n, path: path, val: map[string]*yaml.Node{}}
	n = resolve(n)
	if isNull(n) {
		return f, true
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping, got %s", kindName(n))
		return f, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "keys must be plain strings")
			continue
		}
		if k.Tag == "!!merge" {
			d.errorf(k, path, "merge keys (<<) are not supported")
			continue
		}
		if !contains(allowed, k.Value) {
			d.errorf(k, join(path, k.Value), "unknown key %q (want one of %s)", k.Value, strings.Join(allowed, ", "))
			continue
		}
		if prev, dup := f.val[k.Value]; dup {
			d.errorf(k, join(path, k.Value), "duplicate key (first given at line %d)", prev.Line)
			continue
		}
		f.val[k.Value] = v
	}
	return f, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// join appends a key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a field path.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// has reports whether key is present and not null.
func (f fields) has(key string) bool { return !isNull(resolve(f.val[key])) }

// node returns the value node of key, or the mapping itself when key is
// absent, for error positions.
func (f fields) at(key string) *yaml.Node {
	if n := f.val[key]; n != nil {
		return n
	}
	return f.node
}

// scalarString returns the text of a scalar node; any scalar (string,
// number, boolean) is accepted where OVSDB stores a string.
func (d *decoder) scalarString(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "want a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// str returns the string at key, "" when absent.
func (d *decoder) str(f fields, key string) string {
	if !f.has(key) {
		return ""
	}
	s, _ := d.scalarString(f.val[key], join(f.path, key))
	return s
}

// required returns the non-empty string at key or reports it missing.
func (d *decoder) required(f fields, key string) string {
	s := d.present(f, key)
	if f.has(key) && s == "" && resolve(f.val[key]).Kind == yaml.ScalarNode {
		d.errorf(f.val[key], join(f.path, key), "must not be empty")
	}
	return s
}

// present returns the string at key, which must be given but may be empty.
func (d *decoder) present(f fields, key string) string {
	if !f.has(key) {
		d.errorf(f.node, join(f.path, key), "missing (required)")
		return ""
	}
	return d.str(f, key)
}

// optStr returns a pointer to the string at key, nil when absent.
func (d *decoder) optStr(f fields, key string) *string {
	if !f.has(key) {
		return nil
	}
	s, ok := d.scalarString(f.val[key], join(f.path, key))
	if !ok {
		return nil
	}
	return &s
}

// enum returns the string at key after checking it is one of allowed.
func (d *decoder) enum(f fields, key string, required bool, allowed []string, note string) *string {
	if !f.has(key) {
		if required {
			d.errorf(f.node, join(f.path, key), "missing (required; one of %s)", strings.Join(allowed, ", "))
		}
		return nil
	}
	s, ok := d.scalarString(f.val[key], join(f.path, key))
	if !ok {
		return nil
	}
	if !contains(allowed, s) {
		d.errorf(f.val[key], join(f.path, key), "%q is not one of %s%s", s, strings.Join(allowed, ", "), note)
		return nil
	}
	return &s
}

// integer returns the integer at key checked against lo..hi.
func (d *decoder) integer(f fields, key string, lo, hi int64) (int, bool) {
	if !f.has(key) {
		return 0, false
	}
	n := resolve(f.val[key])
	path := join(f.path, key)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		d.errorf(n, path, "want an integer, got %s", kindName(n))
		return 0, false
	}
	v, err := parseInt(n.Value)
	if err != nil {
		d.errorf(n, path, "want an integer, got %s", kindName(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.errorf(n, path, "%d out of range %d..%d", v, lo, hi)
		return 0, false
	}
	return int(v), true
}

// parseInt reads a YAML 1.2 integer: decimal (a leading zero does not
// make it octal), or 0x hexadecimal, 0o octal.
func parseInt(s string) (int64, error) {
	sign, digits := "", s
	if strings.HasPrefix(digits, "-") || strings.HasPrefix(digits, "+") {
		sign, digits = digits[:1], digits[1:]
	}
	switch {
	case strings.HasPrefix(digits, "0x"):
		return strconv.ParseInt(sign+digits[2:], 16, 64)
	case strings.HasPrefix(digits, "0o"):
		return strconv.ParseInt(sign+digits[2:], 8, 64)
	}
	return strconv.ParseInt(s, 10, 64)
}

// boolean returns the boolean at key.
func (d *decoder) boolean(f fields, key string) (bool, bool) {
	if !f.has(key) {
		return false, false
	}
	n := resolve(f.val[key])
	path := join(f.path, key)
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	d.errorf(n, path, "want true or false, got %s", kindName(n))
	return false, false
}

// list returns the items of the sequence at key (nil when absent).
func (d *decoder) list(f fields, key string) []*yaml.Node {
	if !f.has(key) {
		return nil
	}
	n := resolve(f.val[key])
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, join(f.path, key), "want a list, got %s", kindName(n))
		return nil
	}
	return n.Content
}

// strList returns the list of strings at key.
func (d *decoder) strList(f fields, key string) []string {
	items := d.list(f, key)
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if s, ok := d.scalarString(it, index(join(f.path, key), i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// strMap returns the string-to-string mapping at key (nil when absent or
// empty). Scalar values of any type are taken as their text, so
// `use_ct_inv_match: false` means the string "false" as OVSDB stores it.
func (d *decoder) strMap(f fields, key string) map[string]string {
	m, _ := d.strMapNodes(f, key)
	return m
}

// strMapNodes is strMap that also returns the value nodes by key.
func (d *decoder) strMapNodes(f fields, key string) (map[string]string, map[string]*yaml.Node) {
	if !f.has(key) {
		return nil, nil
	}
	n := resolve(f.val[key])
	path := join(f.path, key)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping of strings, got %s", kindName(n))
		return nil, nil
	}
	out := map[string]string{}
	nodes := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" || k.Tag == "!!merge" {
			d.errorf(k, path, "keys must be strings")
			continue
		}
		kp := path + "." + k.Value
		if _, dup := out[k.Value]; dup {
			d.errorf(k, kp, "duplicate key")
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			d.errorf(v, kp, "want a string value, got %s", kindName(v))
			continue
		}
		out[k.Value] = v.Value
		nodes[k.Value] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nodes
}
