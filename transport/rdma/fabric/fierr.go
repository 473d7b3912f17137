package fabric

import "syscall"

// fiErrnoOffset is FI_ERRNO_OFFSET: libfabric's codes below it are errno
// values (FI_EADDRINUSE is EADDRINUSE), those from it on its own.
const fiErrnoOffset = 256

// fiErr is the cause of an error that libfabric's code rc (negative, as
// its calls return it, or positive) ended: the sentinel of package errs
// it wraps, and the errno the code equals, if it is one, so that
// errors.Is tells a taken port (syscall.EADDRINUSE) from other failures.
// Its text is the sentinel's: the message already has fi_strerror's.
type fiErr struct {
	sentinel error
	rc       int
}

func (e fiErr) Error() string { return e.sentinel.Error() }

func (e fiErr) Unwrap() []error {
	code := e.rc
	if code < 0 {
		code = -code
	}
	if code > 0 && code < fiErrnoOffset {
		return []error{e.sentinel, syscall.Errno(code)}
	}
	return []error{e.sentinel}
}
