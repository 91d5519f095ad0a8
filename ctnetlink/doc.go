// Package ctnetlink flushes, lists, counts and bulk-loads the conntrack
// entries of one zone through ctnetlink (netlink, NETLINK_NETFILTER),
// inside any network namespace.
//
// # Zone flush
//
// Linux 6.8 taught ctnetlink to honour CTA_ZONE in flush and dump
// requests (plus a later fix for zone 0). On such a kernel FlushZone sends
// ONE delete request carrying only the zone and the kernel removes the
// zone in a single walk of its table. Older kernels accept the same
// request and flush every zone of the namespace, answering success; so
// the decision is never taken from the kernel version. Detect runs a probe
// in a throwaway network namespace (entries in zones 0, 1 and 2, a
// zone-only delete of zone 1, zone-filtered dumps of zones 0 and 2) once
// per process and caches the answer per boot (kernel release and
// /proc/sys/kernel/random/boot_id) in /run/aclc.
//
// Where the kernel filter is not available, FlushZone falls back to a
// dump request that still carries the zone (harmless on old kernels,
// which return everything), keeps the zone's entries in userspace and
// deletes them with many requests per sendmsg. Each delete carries the
// entry's original tuple, zone and conntrack ID, so an entry that reused
// the tuple meanwhile is not deleted; ENOENT counts as already gone.
//
// # Batching and buffers
//
// A Conn is one socket, reused for a whole operation. Create and Delete
// pack requests into batches of 64 KiB per sendmsg and ask for an
// acknowledgement only on the last request of each batch: the kernel
// handles a batch in order and reports every failure anyway, so that
// acknowledgement fences the batch and every error is still matched to
// its request. The receive buffer is raised to 32 MiB (SO_RCVBUFFORCE
// when running as root) so that error replies of a large batch are not
// dropped, and dumps are read with 64 KiB buffers (the kernel then fills
// 32 KiB datagrams instead of one page each).
//
// # Network namespaces
//
// Config.NetNS names a namespace under /run/netns (as ip netns add
// creates), Config.NetNSPath any namespace file such as /proc/PID/ns/net.
// Dial opens it and hands the descriptor to mdlayher/netlink, which
// creates the socket inside it; the caller's threads never change
// namespace.
//
// # Libraries
//
// Sockets and batching come from github.com/mdlayher/netlink
// (Conn.SendMessages), netfilter headers from github.com/ti-mo/netfilter,
// and Tuple and Status are github.com/ti-mo/conntrack's types.
// ti-mo/conntrack's own Conn is not used for the work: it sends one
// request per round trip (no batching, its socket is not exposed), its
// Delete does not send CTA_ID (a reused tuple can be deleted by mistake),
// its FlushFilter with a zone does not check kernel support (on an old
// kernel it wipes every zone), and it returns dumps as one slice instead
// of streaming them. Attribute encoding and decoding on the per-entry hot
// paths is done here without allocations, because mdlayher/netlink's
// AttributeEncoder took 4.6 µs per create request, more than the kernel
// needs to insert the entry.
package ctnetlink
