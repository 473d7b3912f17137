package main

/*
#include "gs.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/goshmem/shmem"
)

// CANN SHMEM's start-up (include/shmemx.h): a unique ID made by PE 0,
// handed to the others by the program, then an init with rank and size.

//export goshmem_acl_get_uniqueid
func goshmem_acl_get_uniqueid(buf *C.char, n C.size_t) C.int {
	const op = "aclshmemx_get_uniqueid"
	defer guard(nil)
	setup.Lock()
	tls := pre.tls
	setup.Unlock()
	uid, err := shmem.GetUniqueID(tls...)
	if err != nil {
		record(C.CString(op), err)
		return -1
	}
	s := uid.String()
	if len(s)+1 > int(n) {
		record(C.CString(op), fmt.Errorf("unique ID of %d bytes does not fit aclshmemx_uniqueid_t", len(s)))
		return -1
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(buf)), n)
	copy(b, s)
	b[len(s)] = 0
	return 0
}

// goshmem_acl_set_uid takes the unique ID token in uid's n-byte field
// (aclshmemx_uniqueid_t.internal), read up to its NUL and never past the
// field: a token without one (corrupted or forged in transit) is refused.
//
//export goshmem_acl_set_uid
func goshmem_acl_set_uid(uid *C.char, n C.size_t, rank, npes C.int, heap C.int64_t) C.int {
	const op = "aclshmemx_init_attr"
	defer guard(nil)
	var u shmem.UniqueID
	tok, err := fieldString(unsafe.Pointer(uid), int(n))
	if err == nil {
		u, err = shmem.ParseUniqueID(tok)
	}
	if err == nil && (npes < 1 || rank < 0 || rank >= npes) {
		err = fmt.Errorf("%w: rank %d of %d PEs", shmem.ErrInvalidArgument, rank, npes)
	}
	if err != nil {
		record(C.CString(op), err)
		return -1
	}
	setup.Lock()
	defer setup.Unlock()
	pre.uid, pre.rank, pre.npes, pre.heap = &u, int(rank), int(npes), int64(heap)
	return 0
}

// fieldString reads the NUL-terminated string in the n-byte field at p,
// never a byte past the field (C.GoString would read on to the next NUL,
// or fault): a field without a NUL is an error.
func fieldString(p unsafe.Pointer, n int) (string, error) {
	if p == nil || n <= 0 {
		return "", fmt.Errorf("%w: no unique ID", shmem.ErrInvalidArgument)
	}
	b := unsafe.Slice((*byte)(p), n)
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", fmt.Errorf("%w: the unique ID token is not NUL-terminated within its %d-byte field (corrupted, or not made by aclshmemx_get_uniqueid)", shmem.ErrInvalidArgument, n)
	}
	return string(b[:i]), nil
}

// goshmem_acl_set_tls configures TLS for the unique-ID start-up and the
// world: enable 0 turns it off; enable with empty info keeps goshmem's
// default (credentials derived from the job secret in the unique ID);
// info "ca=FILE;cert=FILE;key=FILE[;crl=FILE]" uses that PKI. Refused
// once init has begun: goshmem cannot change TLS on a running world.
//
//export goshmem_acl_set_tls
func goshmem_acl_set_tls(enable C.int, info *C.char, n C.size_t) C.int {
	op := C.CString("aclshmemx_set_conf_store_tls")
	defer guard(op)
	setup.Lock()
	defer setup.Unlock()
	if pre.initiated {
		return fail(op, errors.New("refused after initialization: TLS is fixed when the world starts"))
	}
	if enable == 0 {
		pre.tls = []shmem.Option{shmem.WithoutTLS()}
		return 0
	}
	spec := ""
	if info != nil && n > 0 {
		spec = strings.TrimRight(C.GoStringN(info, C.int(n)), "\x00")
	}
	if strings.TrimSpace(spec) == "" {
		pre.tls = nil
		return 0
	}
	files := map[string]string{}
	for _, kv := range strings.Split(spec, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok && strings.TrimSpace(kv) != "" {
			return fail(op, fmt.Errorf("%w: %q is not key=file", shmem.ErrInvalidArgument, kv))
		}
		files[k] = v
	}
	cfg, err := shmem.LoadTLS(files["ca"], files["cert"], files["key"], files["crl"])
	if err != nil {
		return fail(op, err)
	}
	pre.tls = []shmem.Option{shmem.WithTLS(cfg)}
	return 0
}
