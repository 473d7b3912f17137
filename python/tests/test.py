"""CANN SHMEM's quick-start under torchrun, on goshmem: rank 0 makes the
unique ID, torch.distributed hands it to the others, each inits with it.

    torchrun --nproc-per-node 4 test.py

It runs without NPUs (gloo). TLS stays on, goshmem's default: the ID
carries the job secret. (CANN SHMEM's own copy turns TLS off first with
set_conf_store_tls(False, ""), which works here too.)
"""
import ctypes

import torch.distributed as dist

import shmem as ash

g_ash_size = 64 * 1024 * 1024
g_malloc_size = 1024 * 1024


def run_init_with_unique_id_tests():
    pe = dist.get_rank()
    world_size = dist.get_world_size()

    unique_id = ash.aclshmem_get_unique_id() if pe == 0 else None
    if pe == 0 and unique_id is None:
        raise ValueError("[ERROR] get unique id failed")
    uid_list = [unique_id]
    dist.broadcast_object_list(uid_list, src=0)
    unique_id = uid_list[0]

    ret = ash.aclshmem_init_using_unique_id(pe, world_size, g_ash_size, unique_id)
    if ret != 0:
        raise ValueError("[ERROR] aclshmem_init failed")

    ptr = ash.aclshmem_malloc(g_malloc_size)
    if ptr is None:
        raise ValueError("[ERROR] aclshmem_malloc failed")

    my_pe, pe_count = ash.my_pe(), ash.pe_count()
    print(f"pe[{pe}]: my_pe:{my_pe} and pe_count:{pe_count}")
    if not (my_pe == pe and pe_count == world_size):
        raise ValueError("[ERROR] pe/world failed")

    # Beyond the quick-start: each PE writes its number into the next
    # PE's buffer, so the world really moves data.
    val = ctypes.c_int64(1000 + my_pe)
    if ash.aclshmem_putmem(ptr, ctypes.addressof(val), 8, (my_pe + 1) % pe_count) != 0:
        raise ValueError("[ERROR] aclshmem_putmem failed")
    ash.aclshmem_barrier_all()
    got = ctypes.c_int64.from_address(ptr).value
    if got != 1000 + (my_pe - 1) % pe_count:
        raise ValueError(f"[ERROR] pe {my_pe} holds {got} from its left neighbour")

    _ = ash.aclshmem_free(ptr)
    if ash.aclshmem_finalize() != 0:
        raise ValueError("[ERROR] aclshmem_finalize failed")


if __name__ == "__main__":
    dist.init_process_group(backend="gloo", init_method="env://")
    run_init_with_unique_id_tests()
    print("test.py running success!")
    # torch asks for this before a normal exit; without it gloo's worker
    # threads may still hold the broadcast's tensors while the interpreter
    # tears down, and rank 0 once died of SIGSEGV after its last line here
    # (CI, a loaded machine; no Go stack in the output: the fault was not
    # in goshmem's runtime, which prints one for its own).
    dist.destroy_process_group()
