package errs

import (
	"errors"
	"testing"
)

// TestJoinOneLine: joined errors read as one line, keep every sentinel
// for errors.Is, and drop one another already quotes or that repeats.
func TestJoinOneLine(t *testing.T) {
	put := New("Put", 0, 2, ErrPEFailed, "completion error: Operation canceled")
	quiet := New("Quiet", 0, 2, put, "write operations outstanding with a failed PE")
	timeout := New("Quiet", 0, 3, ErrTimeout, "writes outstanding")
	if got := Join(put, quiet); got != quiet {
		t.Errorf("Join(put, the Quiet quoting it) = %q, want the Quiet's alone", got)
	}
	if got := Join(nil, put, nil); got != put {
		t.Errorf("Join of one error = %v", got)
	}
	if Join(nil, nil) != nil || Join() != nil {
		t.Error("Join of no errors is not nil")
	}
	if got := Join(put, put); got != put {
		t.Errorf("Join(put, put) = %q, want put once", got)
	}
	j := Join(put, timeout)
	if msg := j.Error(); msg != put.Error()+"; "+timeout.Error() {
		t.Errorf("Join(put, timeout) reads %q", msg)
	}
	if !errors.Is(j, ErrPEFailed) || !errors.Is(j, ErrTimeout) {
		t.Errorf("%v does not match both sentinels", j)
	}
}
