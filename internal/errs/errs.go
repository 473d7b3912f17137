// Package errs holds goshmem's error sentinels and the error type that names
// the operation and the PEs involved. Every package of the module returns
// errors built here so that callers can match them with errors.Is against the
// sentinels the root package re-exports.
package errs

import (
	"errors"
	"fmt"
	"strings"
)

// The sentinels. The root package shmem re-exports each under the same name.
var (
	ErrInvalidArgument = errors.New("invalid argument")
	ErrOutOfMemory     = errors.New("out of symmetric memory")
	ErrPEFailed        = errors.New("PE failed")
	ErrTimeout         = errors.New("timed out")
	ErrFinalized       = errors.New("finalized")
	ErrBootstrap       = errors.New("bootstrap failed")
	ErrTLS             = errors.New("TLS failure")
	// ErrDeadlock: no PE of the world can make progress (the simulator's
	// deadlock detector); the message lists what each PE is blocked in.
	ErrDeadlock = errors.New("deadlock")
)

// NoPE marks an Error field that does not apply.
const NoPE = -1

// Error is a failure of one operation. Its message reads
// "shmem: <op> (PE <me> -> PE <target>): <detail>: <sentinel>".
type Error struct {
	Op     string // the API call, e.g. "Put", "Malloc", "BarrierAll"
	PE     int    // the calling PE, or NoPE
	Target int    // the PE the operation addressed, or NoPE
	Detail string // what was wrong, with the numbers
	Err    error  // a sentinel, or a wrapped cause that wraps one
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("shmem: ")
	b.WriteString(e.Op)
	switch {
	case e.PE != NoPE && e.Target != NoPE:
		fmt.Fprintf(&b, " (PE %d -> PE %d)", e.PE, e.Target)
	case e.PE != NoPE:
		fmt.Fprintf(&b, " (PE %d)", e.PE)
	case e.Target != NoPE:
		fmt.Fprintf(&b, " (PE %d)", e.Target)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error; detail is formatted with args when args are given.
//
// An argument that is an error wrapping err itself loses its trailing
// ": <err>": the new error ends with err once, not "bootstrap failed:
// bootstrap failed".
func New(op string, pe, target int, err error, detail string, args ...any) error {
	if len(args) > 0 {
		copied := false
		for i, a := range args {
			if inner, ok := a.(error); ok && err != nil && errors.Is(inner, err) {
				if t, cut := strings.CutSuffix(inner.Error(), ": "+err.Error()); cut {
					if !copied { // the caller's slice is left as it was
						args, copied = append([]any(nil), args...), true
					}
					args[i] = t
				}
			}
		}
		detail = fmt.Sprintf(detail, args...)
	}
	return &Error{Op: op, PE: pe, Target: target, Detail: detail, Err: err}
}

// As returns err as the failure of op: an *Error of another operation (an
// inner step: a Quiet, a Sync inside a barrier) is renamed to op, keeping
// its PEs, detail and sentinel, with the inner step named in the detail,
// so the caller sees the call it made. Other errors are wrapped. nil stays
// nil.
func As(op string, pe int, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Op == op {
			return err
		}
		c := *e
		c.Op = op
		if c.Detail != "" {
			c.Detail = "in " + e.Op + ": " + c.Detail
		} else {
			c.Detail = "in " + e.Op
		}
		return &c
	}
	return &Error{Op: op, PE: pe, Target: NoPE, Err: err}
}
