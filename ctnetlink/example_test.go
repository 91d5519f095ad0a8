package ctnetlink_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/aclc/aclc/ctnetlink"
)

// Flush one zone of a named network namespace. FlushZone picks the
// kernel's zone filter when the (cached) probe shows the kernel honours
// it, and the dump + batched delete fallback otherwise.
func ExampleConn_FlushZone() {
	c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: "blue"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.FlushZone(7, ctnetlink.FlushOptions{Family: ctnetlink.FamilyAny})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("flushed with", res.Method)
}

// Stream one zone in conntrack -L's format.
func ExampleConn_DumpZone() {
	c, err := ctnetlink.Dial(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	err = c.DumpZone(7, ctnetlink.FamilyAny, func(e ctnetlink.Entry) error {
		fmt.Println(e)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Parse conntrack -R lines; the entries are then inserted with Conn.Create.
func ExampleParseLoad() {
	entries, err := ctnetlink.ParseLoad(strings.NewReader(
		"-I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 2 --state LISTEN -u SEEN_REPLY -t 50\n"), "example")
	if err != nil {
		log.Fatal(err)
	}
	e := entries[0]
	fmt.Println(e.Zone, e.Orig.Proto.SourcePort, e.Reply.Proto.SourcePort, e.TCPState, e.Status)
	// Output: 123 1 2 SYN_SENT2 SEEN_REPLY
}
