// Command uid prints the unique ID of a new goshmem world (shmem.GetUniqueID)
// for a launcher script that starts the PEs itself, as bench/netns.sh does.
// Run it where PE 0 will run, with SHMEM_UID_SESSION_ID set to PE 0's
// address: it reserves the port there.
//
// Usage:
//
//	uid [-notls]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goshmem/shmem"
)

func main() {
	noTLS := flag.Bool("notls", false, "make the unique ID without TLS")
	flag.Parse()
	var opts []shmem.Option
	if *noTLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "uid:", err)
		os.Exit(1)
	}
	fmt.Println(uid.String())
}
