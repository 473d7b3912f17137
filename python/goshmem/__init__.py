"""goshmem for Python: OpenSHMEM over libgoshmem, with numpy views.

    import goshmem
    uid = goshmem.get_unique_id() if rank == 0 else None   # hand it round
    goshmem.init(uid, rank=rank, npes=npes)                 # TLS on
    a = goshmem.array(8, "int64")     # symmetric, a numpy view
    goshmem.put(a, numpy.arange(8), pe=(goshmem.my_pe() + 1) % goshmem.n_pes())
    goshmem.barrier_all()
    goshmem.finalize()

Without a unique ID, init joins the world the launcher's environment
describes (shmemrun, torchrun's RANK/WORLD_SIZE with SHMEM_UID_SESSION_ID
or MASTER_ADDR and SHMEM_JOB_SECRET, ...), as shmem_init does in C.
"""
import ctypes

import numpy as np

from ._core import ShmemError, call_void, check, lib, last_error
from ._lib import TEAM_WORLD, InitAttrC, UniqueIdC

__all__ = ["ShmemError", "init", "finalize", "get_unique_id", "my_pe", "n_pes",
           "array", "free", "put", "get", "atomic_fetch_add", "atomic_compare_swap",
           "barrier_all", "quiet", "broadcast", "fcollect", "sum_reduce", "max_reduce"]

# Symmetric arrays by base address: free needs the allocation's start,
# and a view of a view still names it.
_allocs = {}


def _set_tls(tls):
    """tls True: goshmem's default (credentials from the job secret);
    False: no TLS, as the user asked; a string: CANN's PKI info."""
    info = b"" if isinstance(tls, bool) else str(tls).encode()
    check("aclshmemx_set_conf_store_tls", lib().aclshmemx_set_conf_store_tls(tls is not False, info, len(info)))


def get_unique_id(tls=True):
    """Makes the unique ID of a new world (call it on the PE that will be
    rank 0) and returns it as a string to hand to the others."""
    _set_tls(tls)
    uid = UniqueIdC(version=1)
    check("aclshmemx_get_uniqueid", lib().aclshmemx_get_uniqueid(ctypes.byref(uid)))
    return uid.internal.decode()


def _token(unique_id):
    """The unique ID as the bytes of aclshmemx_uniqueid_t.internal, which
    C reads up to its NUL: a value that leaves no room for the NUL, or
    holds one, is refused (ctypes would store 500 bytes without one)."""
    b = unique_id.encode() if isinstance(unique_id, str) else bytes(unique_id)
    size = UniqueIdC.internal.size
    if len(b) >= size or b"\0" in b:
        raise ValueError("unique ID of %d bytes%s: it must be at most %d bytes and hold no NUL "
                         "(a value from get_unique_id, handed over unchanged)"
                         % (len(b), " with a NUL" if b"\0" in b else "", size - 1))
    return b


def init(unique_id=None, rank=None, npes=None, heap_size=64 << 20, tls=True):
    """Joins a world: the one unique_id names as PE rank of npes, or
    without unique_id the one the environment describes (heap_size then
    comes from SHMEM_SYMMETRIC_SIZE). TLS is on unless tls=False."""
    if unique_id is not None:
        token = _token(unique_id)
    _set_tls(tls)
    attr = InitAttrC()
    if unique_id is None:
        check("aclshmemx_init_attr", lib().aclshmemx_init_attr(0, ctypes.byref(attr)))
        return
    if rank is None or npes is None:
        raise ValueError("init with a unique ID needs rank and npes")
    uid = UniqueIdC(version=1)
    uid.internal = token
    check("aclshmemx_set_attr_uniqueid_args(pe %d of %d)" % (rank, npes),
          lib().aclshmemx_set_attr_uniqueid_args(rank, npes, heap_size, ctypes.byref(uid), ctypes.byref(attr)))
    check("aclshmemx_init_attr(pe %d of %d)" % (rank, npes), lib().aclshmemx_init_attr(2, ctypes.byref(attr)))


def finalize():
    _allocs.clear()
    check("aclshmem_finalize", lib().aclshmem_finalize())


def my_pe():
    return lib().aclshmem_my_pe()


def n_pes():
    return lib().aclshmem_n_pes()


def array(shape, dtype="float64", zero=True):
    """Allocates a symmetric array on every PE (collective: all PEs call it
    alike) and returns it as a numpy array over the symmetric heap."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape))
    nbytes = max(count * dt.itemsize, 1)
    f = lib().aclshmem_calloc if zero else lib().aclshmem_malloc
    addr = call_void("aclshmem_malloc(%d bytes)" % nbytes, f, *((nbytes, 1) if zero else (nbytes,)))
    if not addr:
        raise ShmemError("aclshmem_malloc(%d bytes) on PE %d returned NULL: %s" % (nbytes, my_pe(), last_error()))
    buf = (ctypes.c_char * nbytes).from_address(addr)
    arr = np.frombuffer(buf, dtype=dt, count=count).reshape(shape)
    _allocs[addr] = nbytes
    return arr


def _addr(a):
    return a.__array_interface__["data"][0]


def _symmetric(a, op):
    """The address of symmetric array a, checked to lie in an allocation."""
    if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
        raise TypeError("%s: want a contiguous symmetric array from goshmem.array" % op)
    p = _addr(a)
    for base, n in _allocs.items():
        if base <= p and p + a.nbytes <= base + n:
            return p
    raise ValueError("%s: the array is not in goshmem's symmetric heap (use goshmem.array)" % op)


def free(a):
    """Frees a symmetric array (collective)."""
    p = _addr(a)
    if p not in _allocs:
        raise ValueError("free: not the start of a goshmem.array allocation")
    del _allocs[p]
    call_void("aclshmem_free", lib().aclshmem_free, p)


def put(dest, src, pe):
    """Copies src into symmetric dest on PE pe."""
    d = _symmetric(dest, "put")
    s = np.ascontiguousarray(src, dtype=dest.dtype)
    if s.nbytes > dest.nbytes:
        raise ValueError("put to PE %d: %d bytes into %d" % (pe, s.nbytes, dest.nbytes))
    call_void("shmem_putmem(to PE %d)" % pe, lib().shmem_putmem, d, _addr(s), s.nbytes, pe)


def get(src, pe):
    """Returns a copy of symmetric array src as PE pe holds it."""
    s = _symmetric(src, "get")
    out = np.empty_like(src)
    call_void("shmem_getmem(from PE %d)" % pe, lib().shmem_getmem, _addr(out), s, src.nbytes, pe)
    return out


def _int64_elem(a, index, op):
    if a.dtype != np.int64:
        raise TypeError("%s: want an int64 symmetric array, not %s" % (op, a.dtype))
    _symmetric(a, op)
    return _addr(a) + int(np.ravel_multi_index(index, a.shape) if isinstance(index, tuple) else index) * 8


def atomic_fetch_add(a, index, value, pe):
    """Atomically adds value to a[index] on PE pe; returns the old value."""
    p = _int64_elem(a, index, "atomic_fetch_add")
    return call_void("shmem_int64_atomic_fetch_add(on PE %d)" % pe, lib().shmem_int64_atomic_fetch_add, p, value, pe)


def atomic_compare_swap(a, index, cond, value, pe):
    """Atomically sets a[index] on PE pe to value if it equals cond; returns the old value."""
    p = _int64_elem(a, index, "atomic_compare_swap")
    return call_void("shmem_int64_atomic_compare_swap(on PE %d)" % pe, lib().shmem_int64_atomic_compare_swap, p, cond, value, pe)


def barrier_all():
    call_void("shmem_barrier_all", lib().shmem_barrier_all)


def quiet():
    call_void("shmem_quiet", lib().shmem_quiet)


def broadcast(dest, src, root):
    """Copies root's symmetric src into every other PE's symmetric dest."""
    check("shmem_broadcastmem(root PE %d)" % root,
          lib().shmem_broadcastmem(TEAM_WORLD, _symmetric(dest, "broadcast"), _symmetric(src, "broadcast"), src.nbytes, root))


def fcollect(dest, src):
    """Gathers every PE's symmetric src, in PE order, into symmetric dest."""
    if dest.nbytes < src.nbytes * n_pes():
        raise ValueError("fcollect: dest holds %d bytes, needs %d" % (dest.nbytes, src.nbytes * n_pes()))
    check("shmem_fcollectmem", lib().shmem_fcollectmem(TEAM_WORLD, _symmetric(dest, "fcollect"), _symmetric(src, "fcollect"), src.nbytes))


_REDUCE_TYPES = {np.dtype("int32"): "int32", np.dtype("int64"): "int64",
                 np.dtype("float32"): "float", np.dtype("float64"): "double"}


def _reduce(op, dest, src):
    t = _REDUCE_TYPES.get(src.dtype)
    if t is None or dest.dtype != src.dtype:
        raise TypeError("%s_reduce: want int32, int64, float32 or float64 arrays of one type" % op)
    name = "shmem_%s_%s_reduce" % (t, op)
    check(name, getattr(lib(), name)(TEAM_WORLD, _symmetric(dest, op), _symmetric(src, op), src.size))


def sum_reduce(dest, src):
    """dest = the element-wise sum of every PE's src (symmetric arrays)."""
    _reduce("sum", dest, src)


def max_reduce(dest, src):
    """dest = the element-wise maximum of every PE's src."""
    _reduce("max", dest, src)
