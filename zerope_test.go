package shmem_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/goshmem/shmem"
)

// TestZeroPE: every call on a nil *PE or a zero PE{} fails with
// ErrInvalidArgument (or gives the zero answer) instead of panicking.
func TestZeroPE(t *testing.T) {
	for _, p := range []*shmem.PE{nil, {}} {
		rv := reflect.ValueOf(p)
		for i := range rv.NumMethod() {
			m := rv.Type().Method(i)
			var args []reflect.Value
			for a := 1; a < m.Type.NumIn(); a++ {
				args = append(args, reflect.Zero(m.Type.In(a)))
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("(%#v).%s panics: %v", p, m.Name, r)
					}
				}()
				if m.Type.IsVariadic() {
					out = rv.Method(i).CallSlice(args)
				} else {
					out = rv.Method(i).Call(args)
				}
			}()
			for _, o := range out {
				if err, ok := o.Interface().(error); ok && !errors.Is(err, shmem.ErrInvalidArgument) {
					t.Errorf("(%#v).%s: %v, want ErrInvalidArgument", p, m.Name, err)
				}
			}
		}
		// -1 for both, as a nil or destroyed Team gives (NPEs was 0).
		if got := p.MyPE(); got != -1 {
			t.Errorf("MyPE of a zero PE: %d, want -1", got)
		}
		if got := p.NPEs(); got != -1 {
			t.Errorf("NPEs of a zero PE: %d, want -1", got)
		}
		var s shmem.Sym[int64]
		var l shmem.Sym[int64]
		var sig shmem.Sym[uint64]
		var v int64
		for name, err := range map[string]error{
			"Malloc":          second(shmem.Malloc[int64](p, 1)),
			"Align":           second(shmem.Align[int64](p, 8, 1)),
			"Realloc":         second(shmem.Realloc(p, s, 2)),
			"Free":            shmem.Free(p, s),
			"Put":             shmem.Put(p, s, []int64{1}, 0),
			"Get":             shmem.Get(p, []int64{0}, s, 0),
			"GetNBI":          shmem.GetNBI(p, []int64{0}, s, 0),
			"IPut":            shmem.IPut(p, s, []int64{1}, 1, 1, 1, 0),
			"AtomicFetchAdd":  second(shmem.AtomicFetchAdd(p, s, 1, 0)),
			"AtomicAdd":       shmem.AtomicAdd(p, s, 1, 0),
			"AtomicFetchNBI":  shmem.AtomicFetchNBI(p, &v, s, 0),
			"PutSignal":       shmem.PutSignal(p, s, []int64{1}, sig, 1, shmem.SignalSet, 0),
			"SignalWaitUntil": second(shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1)),
			"WaitUntil":       shmem.WaitUntil(p, s, shmem.CmpEQ, 1),
			"WaitUntilAll":    shmem.WaitUntilAll(p, s, nil, shmem.CmpEQ, 1),
			"SetLock":         shmem.SetLock(p, l),
			"ClearLock":       shmem.ClearLock(p, l),
		} {
			if !errors.Is(err, shmem.ErrInvalidArgument) {
				t.Errorf("%s on a zero PE: %v, want ErrInvalidArgument", name, err)
			}
		}
		if s.Local(p) != nil || shmem.Test(p, s, shmem.CmpEQ, 0) || shmem.SignalFetch(p, sig) != 0 || shmem.AddrAccessible(p, s, 0) {
			t.Error("a local read on a zero PE answered as if the PE were usable")
		}
		if _, ok := shmem.Ptr(p, s, 0); ok {
			t.Error("Ptr on a zero PE reports a mapping")
		}
	}
}
