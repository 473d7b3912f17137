// Package netns builds throw-away networks of hosts for tests: each host is
// a Linux network namespace, joined to one or more LANs (bridges in a
// namespace of their own) by veth pairs, with addresses in 10.213.0.0/16.
// Nothing is created in the caller's namespace and no host has a route
// anywhere but its own LANs, so tests never touch a real network. Tests can
// cut a host's links or partition a LAN to exercise failures.
//
// It needs root and iproute2's ip(8); New skips the test otherwise.
package netns
