package errs

import "strings"

// Join is errors.Join for errors a caller reports as one line of reason:
// the messages are joined by "; " instead of newlines, and an error whose
// message another one's already quotes (a Quiet that names the put it
// found failed) is left out. errors.Is and errors.As see every error
// kept. It returns nil when every error is nil, and a lone error as is.
func Join(list ...error) error {
	var kept []error
	for i, e := range list {
		if e == nil || quoted(e, list, i) {
			continue
		}
		kept = append(kept, e)
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return &joined{kept}
}

// quoted reports whether another error of list quotes list[i]'s message,
// or an earlier one says the same.
func quoted(e error, list []error, i int) bool {
	msg := e.Error()
	for j, o := range list {
		if j == i || o == nil {
			continue
		}
		om := o.Error()
		if om == msg && j < i || om != msg && strings.Contains(om, msg) {
			return true
		}
	}
	return false
}

type joined struct{ errs []error }

func (j *joined) Error() string {
	msgs := make([]string, len(j.errs))
	for i, e := range j.errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (j *joined) Unwrap() []error { return j.errs }
