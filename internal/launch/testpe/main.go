// Command testpe is the one PE program of goshmem's process tests (world,
// internal/netns, cmd/shmemrun): it joins the world its environment
// describes and runs a role, named by its first argument or by
// GOSHMEM_TEST_ROLE. launchtest lists the roles, the variables and the exit
// codes; launchtest.BuildPE builds it.
//
// Lines it prints for the tests: "READY pid=P job=J" once up (roles that
// wait for the test), "INIT FAILED: err", "FAILED <unix ns>: err" (when
// the role's error was seen), "EXIT STATUS s: err" (GlobalExit),
// "FINALIZE: err" and "LEAK: err".
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/failcheck"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

func main() {
	role := os.Getenv(lt.EnvRole)
	if len(os.Args) > 1 {
		role = os.Args[1]
	}
	os.Exit(run(role))
}

// run joins the world, runs role, finalizes and returns the exit code.
func run(role string) int {
	opts, err := options(role)
	if err != nil {
		fmt.Printf("INIT FAILED: %v\n", err)
		return lt.ExitInitFailed
	}
	p, err := shmem.Init(context.Background(), opts...)
	if err != nil {
		at := time.Now().UnixNano()
		fmt.Printf("INIT FAILED: %v\n", err)
		if errors.Is(err, shmem.ErrPEFailed) {
			fmt.Printf("%s %d\n", lt.InitPEFailed, at)
		}
		return lt.ExitInitFailed
	}
	err = runRole(p, role)
	if status, ok := shmem.ExitStatus(err); ok {
		fmt.Printf("EXIT STATUS %d: %v\n", status, err)
		return status
	}
	code := lt.ExitOK
	if err != nil {
		fmt.Printf("FAILED %d: %v\n", time.Now().UnixNano(), err)
		code = lt.ExitError
		if errors.Is(err, shmem.ErrPEFailed) {
			code = lt.ExitPEFailed
		}
	}
	if code == lt.ExitError {
		return code
	}
	// A role that finalizes itself has reported its Finalize: a second
	// call returns the same result again.
	if ferr := p.Finalize(); ferr != nil && !finalizesItself(role) {
		fmt.Printf("FINALIZE: %v\n", ferr)
		switch {
		case err == nil:
			return lt.ExitError
		case !errors.Is(ferr, shmem.ErrPEFailed):
			// Finalize reports the run's failures (ErrPEFailed, as the
			// operation did); anything else is Finalize failing itself.
			return lt.ExitFinalize
		}
	}
	if role == lt.RoleFabric {
		if lerr := fabricLeft(); lerr != nil {
			fmt.Printf("LEAK: %v\n", lerr)
			return lt.ExitLeak
		}
	}
	if os.Getenv(lt.EnvCheckLeaks) == "1" {
		if lerr := leaks(); lerr != nil {
			fmt.Printf("LEAK: %v\n", lerr)
			return lt.ExitLeak
		}
	}
	return code
}

// finalizesItself reports whether role calls Finalize and prints what it
// returned (a failure scenario, RoleGiveUp).
func finalizesItself(role string) bool {
	return strings.HasPrefix(role, lt.RoleScenario) || role == lt.RoleGiveUp
}

// options are Init's options from the test variables, and the operation
// timeout of a failure scenario (role) that has one. Without
// SHMEM_SYMMETRIC_SIZE the heap is 8 MiB, so PEs fit a small /dev/shm.
func options(role string) ([]shmem.Option, error) {
	var opts []shmem.Option
	if os.Getenv("SHMEM_SYMMETRIC_SIZE") == "" {
		opts = append(opts, shmem.WithHeapSize(8<<20))
	}
	rank, _ := strconv.Atoi(os.Getenv("SHMEM_RANK"))
	if name, ok := strings.CutPrefix(role, lt.RoleScenario); ok {
		for _, sc := range failcheck.Scenarios() {
			if sc.Name == name && sc.Timeout > 0 && (sc.TimeoutOn == nil || slices.Contains(sc.TimeoutOn, rank)) {
				opts = append(opts, shmem.WithOpTimeout(time.Duration(sc.Timeout)*time.Millisecond))
			}
		}
	}
	if role == lt.RoleGiveUp && rank == whoOf(os.Getenv("SHMEM_NPES")) {
		opts = append(opts, shmem.WithOpTimeout(lt.GiveUpTimeout))
	}
	if v := os.Getenv(lt.EnvInitTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", lt.EnvInitTimeout, err)
		}
		opts = append(opts, shmem.WithTimeout(d))
	}
	if os.Getenv(lt.EnvNoTLS) == "1" {
		opts = append(opts, shmem.WithoutTLS())
	}
	if dir := os.Getenv(lt.EnvTLSPEM); dir != "" {
		cfg, err := shmem.LoadTLS(dir+"/ca.pem", dir+"/pe.pem", dir+"/pe.key", "")
		if err != nil {
			return nil, err
		}
		opts = append(opts, shmem.WithTLS(cfg))
	}
	if role == lt.RoleFabricStatics {
		opts = append(opts, shmem.WithStatics(staticsRegion))
	}
	if seeds := os.Getenv(lt.EnvSeeds); seeds != "" {
		n, _ := strconv.Atoi(os.Getenv("SHMEM_NPES"))
		if v := os.Getenv(lt.EnvGossipNPEs); v != "" {
			n, _ = strconv.Atoi(v)
		}
		opts = append(opts, shmem.WithSeeds(strings.Split(seeds, ","), n))
	}
	return opts, nil
}

// who is the rank a role singles out: TEST_WHO, default the last PE.
func who(p *shmem.PE) int { return whoOf(strconv.Itoa(p.NPEs())) }

// whoOf is who before Init, in a world of npes PEs (SHMEM_NPES).
func whoOf(npes string) int {
	if v, err := strconv.Atoi(os.Getenv(lt.EnvWho)); err == nil {
		return v
	}
	n, _ := strconv.Atoi(npes)
	return n - 1
}

// ready prints the READY line.
func ready() {
	job := ""
	if uid, err := shmem.ParseUniqueID(os.Getenv("SHMEM_UNIQUE_ID")); err == nil {
		job = uid.JobName()
	}
	fmt.Printf("%s pid=%d job=%s\n", lt.Ready, os.Getpid(), job)
}
