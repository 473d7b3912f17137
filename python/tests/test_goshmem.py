"""goshmem's Python API across real processes, and the start-up rules."""
import os
import random
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "worker.py")


def free_addr():
    # The port is free now; rank 0 binds it a moment later. It is taken
    # below the kernel's ephemeral range, as GetUniqueID does: a port from
    # that range could go to another rank's own listener (bound to port 0)
    # before rank 0 binds it. The address is loopback only.
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        lo = 32768
    for _ in range(100):
        port = random.randrange(10000, max(lo, 10001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return "127.0.0.1:%d" % port
    raise RuntimeError("no free port below %d" % lo)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith(("SHMEM_", "SMEM_", "MASTER_")) or k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))}
    env.update(extra)
    return env


def run_job(n, env_of, args=()):
    procs = [subprocess.Popen([sys.executable, WORKER] + list(args(r) if callable(args) else args),
                              env=env_of(r), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(n)]
    return [(p.wait(timeout=120), p.stdout.read()) for p in procs]


@pytest.mark.parametrize("n", [2, 4])
def test_session_start_tls_on(n):
    """CANN SHMEM's script start-up: only SHMEM_UID_SESSION_ID, a rank
    from torchrun's variables, and the shared job secret."""
    addr = free_addr()
    res = run_job(n, lambda r: clean_env(SHMEM_UID_SESSION_ID=addr, RANK=str(r), WORLD_SIZE=str(n),
                                         SHMEM_JOB_SECRET="pytest-secret"))
    for r, (rc, out) in enumerate(res):
        assert rc == 0 and "PE %d of %d ok" % (r, n) in out, out
        assert "TLS is off" not in out


def test_session_start_tls_off_by_switch():
    addr = free_addr()
    res = run_job(2, lambda r: clean_env(SHMEM_UID_SESSION_ID=addr, SHMEM_RANK=str(r), SHMEM_NPES="2",
                                         SMEM_CONF_STORE_TLS_ENABLE="0"))
    for r, (rc, out) in enumerate(res):
        assert rc == 0 and "PE %d of 2 ok" % r in out and "TLS is off" in out, out


def test_session_start_tls_off_by_goshmem_switch():
    """goshmem.init(tls=False) is the user's word too; no secret needed."""
    addr = free_addr()
    res = run_job(2, lambda r: clean_env(SHMEM_UID_SESSION_ID=addr, RANK=str(r), WORLD_SIZE="2"), args=["notls"])
    for r, (rc, out) in enumerate(res):
        assert rc == 0 and "PE %d of 2 ok" % r in out and "TLS is off" in out, out


def test_session_start_without_secret_or_switch_fails():
    addr = free_addr()
    res = run_job(2, lambda r: clean_env(SHMEM_UID_SESSION_ID=addr, RANK=str(r), WORLD_SIZE="2"))
    for r, (rc, out) in enumerate(res):
        assert rc != 0
        assert "rank %d of 2" % r in out and "SHMEM_JOB_SECRET" in out and "SMEM_CONF_STORE_TLS_ENABLE=0" in out, out


def test_unique_id_start(tmp_path):
    """PE 0's unique ID handed to the others through a file; TLS on by default."""
    import goshmem
    path = tmp_path / "uid"
    # The ID is made in this process, which then plays no PE: the ID only
    # names an address and a secret, and PE 0 binds the address at init.
    os.environ.pop("SHMEM_UID_SESSION_ID", None)
    os.environ["SHMEM_UID_SOCK_IFNAME"] = "lo"
    try:
        uid = goshmem.get_unique_id()
    finally:
        del os.environ["SHMEM_UID_SOCK_IFNAME"]
    assert uid.startswith("gsu1.")
    path.write_text(uid)
    res = run_job(3, lambda r: clean_env(), args=lambda r: ["uid", str(path), str(r), "3"])
    for r, (rc, out) in enumerate(res):
        assert rc == 0 and "PE %d of 3 ok" % r in out, out


@pytest.mark.parametrize("tls", ["on", "off"])
def test_cann_names(tls):
    """import shmem as CANN SHMEM's scripts do: set_conf_store_tls (off on
    every rank, or left alone: TLS on), rank 0's aclshmem_get_unique_id
    handed to the others, aclshmem_init_using_unique_id, malloc, putmem,
    my_pe, pe_count, finalize; set_conf_store_tls refused after init."""
    n = 3
    env = clean_env(SHMEM_UID_SOCK_IFNAME="lo")
    first = subprocess.Popen([sys.executable, WORKER, "cann", "0", str(n), tls], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = first.stdout.readline()
        assert line.startswith("UID "), line + first.stdout.read()
        uid = line.split()[1]
        res = run_job(n - 1, lambda r: env, args=lambda r: ["cann", str(r + 1), str(n), tls, uid])
        res.insert(0, (first.wait(timeout=120), line + first.stdout.read()))
    finally:
        first.kill()
    for r, (rc, out) in enumerate(res):
        assert rc == 0 and "PE %d of %d ok" % (r, n) in out, out
        assert ("TLS is off" in out) == (tls == "off"), out
        assert "aclshmemx_set_conf_store_tls" in out, out  # the refusal after init says why


def test_not_symmetric_is_refused():
    import numpy as np
    import goshmem
    with pytest.raises(ValueError, match="not in goshmem's symmetric heap"):
        goshmem.put(np.zeros(4), np.ones(4), pe=0)


@pytest.mark.parametrize("uid", ["A" * 500, b"A" * 600, "gsu1.x\0y"])
def test_unique_id_without_room_for_nul_is_refused(uid):
    """A value that fills aclshmemx_uniqueid_t.internal (500 bytes) leaves
    no NUL for C to stop at, and one with a NUL would be cut short: both
    are refused before they reach the library."""
    import goshmem
    with pytest.raises(ValueError, match="at most 499 bytes and hold no NUL"):
        goshmem.init(unique_id=uid, rank=0, npes=2)
