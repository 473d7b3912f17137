"""The library handle and error reporting shared by goshmem and shmem."""
import ctypes

from . import _lib

_handle = None


class ShmemError(RuntimeError):
    """A goshmem call failed; the message names the call and the PEs."""


def lib():
    """libgoshmem, loaded on first use."""
    global _handle
    if _handle is None:
        _handle = _lib.load()
    return _handle


def last_error():
    p = lib().shmemx_last_error()
    return ctypes.string_at(p).decode(errors="replace") if p else ""


def check(op, rc):
    """Raises ShmemError naming op when the C call returned non-zero."""
    if rc != 0:
        raise ShmemError("%s failed (%d): %s" % (op, rc, last_error() or "no detail"))
    return rc


def call_void(op, fn, *args):
    """Calls a C function that has no return code; in SHMEMX_ERRORS_RETURN
    mode a failure shows only as a new shmemx_last_error string."""
    before = lib().shmemx_last_error()
    out = fn(*args)
    after = lib().shmemx_last_error()
    if after and after != before:
        raise ShmemError("%s failed: %s" % (op, ctypes.string_at(after).decode(errors="replace")))
    return out
