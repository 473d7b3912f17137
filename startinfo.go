package shmem

import (
	"fmt"

	"github.com/goshmem/shmem/bootstrap"
)

// announce prints what OpenSHMEM's SHMEM_VERSION and SHMEM_INFO ask for, on
// PE 0 only (as other implementations do, so a job prints it once), once
// the world is up. A failed write is ignored: it is information, and the
// world is already formed.
func announce(p *PE, o *options) {
	if o.announce == nil || p.MyPE() != 0 || !(o.printVersion || o.printInfo) {
		return
	}
	if o.printVersion {
		fmt.Fprintf(o.announce, "%s %s: OpenSHMEM %d.%d\n", VendorString, Version, MajorVersion, MinorVersion)
	}
	if o.printInfo {
		fmt.Fprintf(o.announce, "%s reads these environment variables (%s, %s: any value):\n\n%s", VendorString, bootstrap.EnvVersion, bootstrap.EnvInfo, bootstrap.EnvTable)
	}
}
