"""CANN SHMEM's quick-start (test.py) under torchrun with 2 and 4 ranks."""
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torchrun needs torch (Debian: python3-torch)")

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("n", [2, 4])
def test_torchrun_quick_start(n):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SHMEM_", "SMEM_"))}
    # torch 1.13 (Debian's) spells it --nproc_per_node; newer torch takes
    # both. --standalone picks a free local rendezvous port. Debian's
    # torch 1.13 on Python 3.11 cannot parse its own defaults "0" for
    # --redirects and --tee (Std.from_str finds no NONE member under
    # 3.11's flag enums and crashes); 2 (stderr, teed) parses.
    # Rank 0 listens on loopback: the ranks share this host.
    env["SHMEM_UID_SOCK_IFNAME"] = "lo"
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--redirects", "2", "--tee", "2",
                          "--nproc_per_node", str(n), os.path.join(HERE, "test.py")],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("test.py running success!") == n, out.stdout
    for pe in range(n):
        assert "pe[%d]: my_pe:%d and pe_count:%d" % (pe, pe, n) in out.stdout
