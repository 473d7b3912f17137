"""Finding and loading libgoshmem, and the C prototypes the package uses."""
import ctypes
import os
import subprocess

LIB_NAME = "libgoshmem.so"


def _installed_dirs():
    # setup.py records, at install time, where the library was and the
    # source checkout it came from; a missing module means a source tree
    # used without installing.
    try:
        from . import _install
    except ImportError:
        return None, None
    return _install.LIB_DIR, _install.SOURCE_ROOT


def _source_root(start):
    """The goshmem checkout holding start, found by its go.mod, or None."""
    d = os.path.abspath(start)
    while True:
        gomod = os.path.join(d, "go.mod")
        if os.path.isfile(gomod):
            with open(gomod) as f:
                if "module github.com/goshmem/shmem" in f.readline():
                    return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def build_lib_dir(root):
    """Builds libgoshmem in checkout root (oshcc caches it) and returns its directory."""
    out = subprocess.run(["go", "run", "./cmd/oshcc", "--lib-dir"], cwd=root,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError("building libgoshmem with `go run ./cmd/oshcc --lib-dir` in %s failed: %s"
                      % (root, out.stderr.strip()))
    return out.stdout.strip().splitlines()[-1]


def find_library():
    """The path of libgoshmem.so: GOSHMEM_LIB (the file or its directory),
    else the directory recorded at install, else built from the source
    checkout (recorded at install, or the one this package sits in)."""
    env = os.environ.get("GOSHMEM_LIB")
    if env:
        path = os.path.join(env, LIB_NAME) if os.path.isdir(env) else env
        if not os.path.isfile(path):
            raise OSError("GOSHMEM_LIB=%s: no %s there" % (env, LIB_NAME))
        return path
    lib_dir, root = _installed_dirs()
    if lib_dir and os.path.isfile(os.path.join(lib_dir, LIB_NAME)):
        return os.path.join(lib_dir, LIB_NAME)
    root = root if root and os.path.isdir(root) else _source_root(os.path.dirname(__file__))
    if root is None:
        raise OSError("libgoshmem.so not found: set GOSHMEM_LIB to it, or install the package "
                      "from a goshmem checkout with Go available (pip install ./python)")
    return os.path.join(build_lib_dir(root), LIB_NAME)


def _proto(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


class UniqueIdC(ctypes.Structure):
    """aclshmemx_uniqueid_t as shmemx.h lays it out."""
    _fields_ = [("version", ctypes.c_int32), ("my_pe", ctypes.c_int32),
                ("n_pes", ctypes.c_int32), ("internal", ctypes.c_char * 500)]


class InitAttrC(ctypes.Structure):
    """aclshmemx_init_attr_t as shmemx.h lays it out."""
    _fields_ = [("my_pe", ctypes.c_int), ("n_pes", ctypes.c_int),
                ("local_mem_size", ctypes.c_int64), ("comm_args", ctypes.c_void_p)]


def load():
    lib = ctypes.CDLL(find_library(), mode=ctypes.RTLD_GLOBAL)
    vp, sz, i, i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int64
    team = ctypes.c_void_p
    _proto(lib, "shmemx_last_error", vp)
    _proto(lib, "shmemx_set_error_mode", None, i)
    _proto(lib, "aclshmemx_get_uniqueid", i, ctypes.POINTER(UniqueIdC))
    _proto(lib, "aclshmemx_set_attr_uniqueid_args", i, i, i, i64, ctypes.POINTER(UniqueIdC), ctypes.POINTER(InitAttrC))
    _proto(lib, "aclshmemx_init_attr", i, i, ctypes.POINTER(InitAttrC))
    _proto(lib, "aclshmemx_set_conf_store_tls", i, ctypes.c_bool, ctypes.c_char_p, ctypes.c_uint32)
    _proto(lib, "aclshmem_malloc", vp, sz)
    _proto(lib, "aclshmem_calloc", vp, sz, sz)
    _proto(lib, "aclshmem_align", vp, sz, sz)
    _proto(lib, "aclshmem_free", None, vp)
    _proto(lib, "aclshmem_finalize", i)
    _proto(lib, "aclshmem_my_pe", i)
    _proto(lib, "aclshmem_n_pes", i)
    _proto(lib, "shmem_global_exit", None, i)
    _proto(lib, "shmem_barrier_all", None)
    _proto(lib, "shmem_quiet", None)
    _proto(lib, "shmem_ptr", vp, vp, i)
    _proto(lib, "shmem_putmem", None, vp, vp, sz, i)
    _proto(lib, "shmem_getmem", None, vp, vp, sz, i)
    _proto(lib, "shmem_int64_atomic_fetch_add", i64, vp, i64, i)
    _proto(lib, "shmem_int64_atomic_compare_swap", i64, vp, i64, i64, i)
    _proto(lib, "shmem_broadcastmem", i, team, vp, vp, sz, i)
    _proto(lib, "shmem_fcollectmem", i, team, vp, vp, sz)
    for t in ("int32", "int64", "float", "double"):
        _proto(lib, "shmem_%s_sum_reduce" % t, i, team, vp, vp, sz)
        _proto(lib, "shmem_%s_max_reduce" % t, i, team, vp, vp, sz)
    # Calls without a return code report failure through shmemx_last_error
    # instead of ending the Python process.
    lib.shmemx_set_error_mode(1)
    return lib


TEAM_WORLD = ctypes.c_void_p(1)  # SHMEM_TEAM_WORLD in shmem.h
