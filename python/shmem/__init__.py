"""CANN SHMEM's Python names over goshmem, so its scripts run unchanged.

Calls return CANN SHMEM's status codes (0 on success) rather than raising;
on failure the reason, naming the call and the PEs, goes to stderr.
Pointers are ints, as CANN SHMEM's are.
"""
import sys

import goshmem as _g
from goshmem._core import ShmemError, call_void, lib as _lib

__all__ = ["set_conf_store_tls", "aclshmem_get_unique_id", "aclshmem_init_using_unique_id",
           "aclshmem_malloc", "aclshmem_calloc", "aclshmem_align", "aclshmem_free", "aclshmem_ptr",
           "aclshmem_putmem", "aclshmem_getmem", "aclshmem_barrier_all", "aclshmem_finalize",
           "aclshmem_finialize", "my_pe", "pe_count", "aclshmem_global_exit"]

ACLSHMEM_SUCCESS = 0
ACLSHMEM_INVALID_PARAM = -1
ACLSHMEM_INNER_ERROR = -2

# CANN SHMEM's TLS choice is made before the unique ID and init; it is
# kept here and given to both.
_tls = True


def _status(fn, *args):
    try:
        fn(*args)
        return ACLSHMEM_SUCCESS
    except (ShmemError, ValueError, TypeError) as e:
        print("shmem: %s" % e, file=sys.stderr)
        return ACLSHMEM_INNER_ERROR


def set_conf_store_tls(enable, tls_info=""):
    """enable False turns TLS off (say so on every PE); True with empty
    info is goshmem's default, "ca=...;cert=...;key=..." a PKI. Before the
    unique ID and init only: once the world runs it is refused (nonzero)."""
    global _tls
    want = False if not enable else (tls_info or True)
    status = _status(_g._set_tls, want)
    if status == ACLSHMEM_SUCCESS:
        _tls = want
    return status


def aclshmem_get_unique_id():
    """The unique ID of a new world, on the PE that will be 0; None on failure."""
    try:
        return _g.get_unique_id(tls=_tls)
    except ShmemError as e:
        print("shmem: %s" % e, file=sys.stderr)
        return None


def aclshmem_init_using_unique_id(my_pe, n_pes, local_mem_size, unique_id):
    return _status(_g.init, unique_id, my_pe, n_pes, local_mem_size, _tls)


def aclshmem_malloc(size):
    p = call_void("aclshmem_malloc", _lib().aclshmem_malloc, size)
    return p or None


def aclshmem_calloc(nmemb, size):
    return call_void("aclshmem_calloc", _lib().aclshmem_calloc, nmemb, size) or None


def aclshmem_align(alignment, size):
    return call_void("aclshmem_align", _lib().aclshmem_align, alignment, size) or None


def aclshmem_free(ptr):
    return _status(call_void, "aclshmem_free", _lib().aclshmem_free, ptr)


def aclshmem_ptr(ptr, pe):
    """The local address of ptr's counterpart on PE pe, or None where it
    cannot be addressed directly (another host)."""
    return _lib().shmem_ptr(ptr, pe) or None


def aclshmem_putmem(dst, src, size, pe):
    return _status(call_void, "aclshmem_putmem(to PE %d)" % pe, _lib().shmem_putmem, dst, src, size, pe)


def aclshmem_getmem(dst, src, size, pe):
    return _status(call_void, "aclshmem_getmem(from PE %d)" % pe, _lib().shmem_getmem, dst, src, size, pe)


def aclshmem_barrier_all():
    return _status(_g.barrier_all)


def aclshmem_finalize():
    return _status(_g.finalize)


# CANN SHMEM's Python module spells it so too.
aclshmem_finialize = aclshmem_finalize


def my_pe():
    return _g.my_pe()


def pe_count():
    return _g.n_pes()


def aclshmem_global_exit(status):
    _lib().shmem_global_exit(status)
