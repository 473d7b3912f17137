// Command shmem-config reports on goshmem and the host it runs on, like
// CANN SHMEM's shmem-config:
//
//	shmem-config --version    goshmem and OpenSHMEM versions
//	shmem-config --diagnose   JSON: shared memory, rendezvous address,
//	                          UCX, RDMA, libfabric providers, TLS,
//	                          limits, next steps
//	shmem-config --diagnose --uid TOKEN|@FILE
//	                          also: can this host reach and authenticate
//	                          with that job's rank 0, and its clock skew
//	shmem-config --reap       remove segments of dead jobs from /dev/shm
//	shmem-config --env        the environment variables goshmem reads
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/transport/udma"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is shmem-config with its outputs given; it returns the exit status:
// 2 for a bad command line, 1 when --reap failed, else 0 (a degraded host
// is reported in the JSON, not the status).
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shmem-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.Bool("version", false, "print goshmem's version and the OpenSHMEM version it follows")
	diagnose := fs.Bool("diagnose", false, "print a JSON report on this host")
	reap := fs.Bool("reap", false, "remove the /dev/shm segments of jobs whose processes died")
	env := fs.Bool("env", false, "print the environment variables goshmem reads (Markdown)")
	uidArg := fs.String("uid", "", "with --diagnose: probe the rank 0 of this unique ID (the token, or @file holding it)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || !*version && !*diagnose && !*reap && !*env {
		fmt.Fprintln(stderr, "usage: shmem-config --version | --diagnose | --reap | --env")
		return 2
	}
	if *version {
		major, minor := shmem.InfoGetVersion()
		fmt.Fprintf(stdout, "goshmem %s (OpenSHMEM %s, %s)\n", shmem.Version, specVersion(major, minor), runtime.Version())
	}
	if *env {
		fmt.Fprint(stdout, bootstrap.EnvTable)
	}
	if *reap {
		n, err := udma.ReapStale()
		fmt.Fprintf(stdout, "removed %d stale segment(s) from %s\n", n, udma.Dir)
		if err != nil {
			fmt.Fprintf(stderr, "shmem-config: %v\n", err)
			return 1
		}
	}
	if *diagnose {
		var uid *bootstrap.UniqueID
		if *uidArg != "" {
			u, err := readUID(*uidArg)
			if err != nil {
				fmt.Fprintf(stderr, "shmem-config: --uid: %v\n", err)
				return 2
			}
			uid = &u
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(gather(uid)); err != nil {
			fmt.Fprintf(stderr, "shmem-config: %v\n", err)
			return 1
		}
	}
	return 0
}

// readUID parses a unique ID given as its token or as @file.
func readUID(arg string) (bootstrap.UniqueID, error) {
	if path, ok := strings.CutPrefix(arg, "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return bootstrap.UniqueID{}, err
		}
		arg = string(b)
	}
	return bootstrap.ParseUniqueID(strings.TrimSpace(arg))
}

func specVersion(major, minor int) string { return strconv.Itoa(major) + "." + strconv.Itoa(minor) }

// fiInfo returns `fi_info -l`, libfabric's list of providers.
func fiInfo() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "fi_info", "-l").Output()
	return string(out), err
}

// ldconfig returns `ldconfig -p`, or "" when it is missing or slow.
func ldconfig() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"} {
		if out, err := exec.CommandContext(ctx, p, "-p").Output(); err == nil {
			return string(out)
		}
	}
	return ""
}
