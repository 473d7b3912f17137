"""Installs goshmem's Python packages (pure Python over libgoshmem).

At install, from a goshmem checkout with Go available, libgoshmem is built
(go run ./cmd/oshcc --lib-dir) and its directory recorded in
goshmem/_install.py, with the checkout for rebuilding later; without Go
nothing is recorded and GOSHMEM_LIB must name the library at run time.
"""
import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class RecordLibrary(build_py):
    def run(self):
        super().run()
        lib_dir, root = None, None
        if os.path.isfile(os.path.join(ROOT, "go.mod")):
            root = ROOT
            try:
                out = subprocess.run(["go", "run", "./cmd/oshcc", "--lib-dir"], cwd=ROOT,
                                     capture_output=True, text=True, check=True)
                lib_dir = out.stdout.strip().splitlines()[-1]
            except (OSError, subprocess.CalledProcessError) as e:
                print("goshmem: libgoshmem not built at install (%s); it will be built on first import "
                      "or set GOSHMEM_LIB" % e)
        path = os.path.join(self.build_lib, "goshmem", "_install.py")
        with open(path, "w") as f:
            f.write("# Written by setup.py at install.\nLIB_DIR = %r\nSOURCE_ROOT = %r\n" % (lib_dir, root))


setup(
    name="goshmem",
    version="0.1.0",
    description="OpenSHMEM for Python over goshmem's libgoshmem, with CANN SHMEM's names",
    packages=["goshmem", "shmem"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass={"build_py": RecordLibrary},
)
