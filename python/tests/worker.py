"""One PE of the pytest jobs: joins the world its environment or argv
describes, checks RMA, atomics, barrier and collectives with real values,
and prints "PE r of n ok"."""
import sys

import numpy as np

import goshmem


def cann():
    """CANN SHMEM's names (import shmem), as its scripts use them; argv:
    rank, npes, "on"/"off" (TLS), and for ranks but 0 the unique ID, which
    rank 0 prints first."""
    import ctypes
    import shmem as ash
    rank, npes, tls = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if tls == "off":
        assert ash.set_conf_store_tls(False, "") == 0
    if rank == 0:
        uid = ash.aclshmem_get_unique_id()
        assert uid is not None
        print("UID " + uid, flush=True)
    else:
        uid = sys.argv[5]
    assert ash.aclshmem_init_using_unique_id(rank, npes, 16 << 20, uid) == 0
    # TLS is fixed once the world runs.
    assert ash.set_conf_store_tls(False, "") != 0
    me, n = ash.my_pe(), ash.pe_count()
    assert (me, n) == (rank, npes)
    ptr = ash.aclshmem_malloc(8)
    assert ptr is not None
    val = ctypes.c_int64(500 + me)
    assert ash.aclshmem_putmem(ptr, ctypes.addressof(val), 8, (me + 1) % n) == 0
    assert ash.aclshmem_barrier_all() == 0
    got = ctypes.c_int64.from_address(ptr).value
    assert got == 500 + (me - 1) % n, got
    assert ash.aclshmem_free(ptr) == 0
    print("PE %d of %d ok" % (me, n), flush=True)
    assert ash.aclshmem_finalize() == 0


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "env"
    if mode == "cann":
        cann()
        return
    if mode == "uid":  # argv: uid token file, rank, npes
        path, rank, npes = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        with open(path) as f:
            goshmem.init(f.read().strip(), rank=rank, npes=npes, heap_size=16 << 20)
    elif mode == "notls":  # goshmem's own switch instead of CANN's variable
        goshmem.init(tls=False)
    else:
        goshmem.init()
    me, n = goshmem.my_pe(), goshmem.n_pes()
    right = (me + 1) % n

    a = goshmem.array(8, "int64")
    goshmem.put(a, np.arange(8) + 100 * me, pe=right)
    goshmem.barrier_all()
    left = (me - 1) % n
    assert (a == np.arange(8) + 100 * left).all(), "put from PE %d: %s" % (left, a)
    assert (goshmem.get(a, pe=right) == np.arange(8) + 100 * me).all()

    ctr = goshmem.array(1, "int64")
    goshmem.barrier_all()
    old = goshmem.atomic_fetch_add(ctr, 0, me + 1, pe=0)
    assert 0 <= old < n * (n + 1) // 2
    goshmem.barrier_all()
    if me == 0:
        assert ctr[0] == n * (n + 1) // 2, "counter %d" % ctr[0]

    # Every PE races to claim PE 0's word; exactly one wins.
    claim = goshmem.array(1, "int64")
    claim[0] = -1
    goshmem.barrier_all()
    won = goshmem.atomic_compare_swap(claim, 0, -1, me, pe=0) == -1
    wins = goshmem.array(1, "int64")
    mine = goshmem.array(1, "int64")
    mine[0] = 1 if won else 0
    goshmem.barrier_all()
    goshmem.sum_reduce(wins, mine)
    assert wins[0] == 1, "%d PEs won the compare-swap" % wins[0]
    goshmem.put(a, np.full(8, 7 + me), pe=right)
    goshmem.quiet()
    goshmem.barrier_all()
    assert (a == 7 + left).all(), a
    hi = goshmem.array(2, "int32")
    mine32 = goshmem.array(2, "int32")
    mine32[:] = [me, -me]
    goshmem.barrier_all()
    goshmem.max_reduce(hi, mine32)
    assert list(hi) == [n - 1, 0], hi

    src = goshmem.array(3, "float64")
    src[:] = [me, 2.0 * me, 1.5]
    dst = goshmem.array(3, "float64")
    goshmem.barrier_all()
    goshmem.sum_reduce(dst, src)
    assert np.allclose(dst, [n * (n - 1) / 2, n * (n - 1), 1.5 * n]), dst

    one = goshmem.array(2, "int32")
    one[:] = [me, -me]
    every = goshmem.array(2 * n, "int32")
    goshmem.barrier_all()
    goshmem.fcollect(every, one)
    assert (every.reshape(n, 2)[:, 0] == np.arange(n)).all(), every

    b = goshmem.array(4, "float32")
    if me == n - 1:
        b[:] = [1, 2, 3, 4]
    out = goshmem.array(4, "float32")
    goshmem.barrier_all()
    goshmem.broadcast(out, b, root=n - 1)
    if me != n - 1:
        assert (out == [1, 2, 3, 4]).all(), out
    goshmem.free(a)
    goshmem.barrier_all()
    print("PE %d of %d ok" % (me, n), flush=True)
    goshmem.finalize()


if __name__ == "__main__":
    main()
