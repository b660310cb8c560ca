"""Target names of `sorun compile` -> TVM 0.27 targets, the toolchain each needs (checked before any work)
and how its library is exported.

  host              the CPU running the compile (LLVM's name for it, e.g. znver3, skylake-avx512)
  cpu:NAME          a named x86-64 CPU (any LLVM -mcpu name: x86-64-v3, skylake-avx512, znver4, ...)
  cuda[:sm_XX]      NVIDIA GPUs (default sm_90: H100/H200); kernels compiled by nvcc into a fatbin with machine
                    code for sm_XX and its PTX, never left as source; host code for this machine's CPU family
  aarch64[:CPU]     64-bit Arm Linux with NEON (optionally an LLVM -mcpu, e.g. cortex-a72, neoverse-n1),
                    cross-compiled and linked with Debian's aarch64-linux-gnu-gcc
"""
import os
import re
import shutil

from .blob_export import BlobPacker
from .errors import CompileError

AARCH64_CC = "aarch64-linux-gnu-gcc"


class TargetSpec:
    """A resolved target: `name` as the user gave it, `kind` (host/cpu/cuda/aarch64), the TVM target dict,
    `runs_here` (its library runs on this machine: checked with sorun and TVM's VM), `tunable_here` (MetaSchedule
    can measure it on this machine) and the export_library keyword arguments."""

    def __init__(self, name, kind, target, runs_here, tunable_here, export_kwargs, host_target=None, note=""):
        self.name, self.kind, self.target = name, kind, target
        self.runs_here, self.tunable_here = runs_here, tunable_here
        self.export_kwargs, self.host_target, self.note = export_kwargs, host_target, note

    def tvm_target(self):
        import tvm  # pylint: disable=import-outside-toplevel

        if self.host_target is not None:
            return tvm.target.Target(self.target, host=self.host_target)
        return tvm.target.Target(self.target)


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _host_cpu():
    import tvm  # pylint: disable=import-outside-toplevel

    return tvm.target.codegen.llvm_get_system_cpu()


def _find_c_compiler():
    for cc in (os.environ.get("CXX"), os.environ.get("CC"), "g++", "gcc", "cc"):
        if cc and shutil.which(cc):
            return cc
    return None


def resolve(name, nvcc=None):
    """The TargetSpec of target `name`; refuses an unknown name or a missing tool, naming it."""
    import tvm  # pylint: disable=import-outside-toplevel

    kind, _, arg = name.partition(":")
    if kind in ("host", "cpu"):
        if not _find_c_compiler():
            raise CompileError("toolchain", "target %s: no C compiler (g++, gcc or cc) to link the library: "
                               "apt-get install g++" % name)
        if kind == "host":
            if arg:
                raise CompileError("toolchain", "target %r: host takes no argument (use cpu:NAME)" % name)
            mcpu = _host_cpu()
        else:
            mcpu = arg
            if not mcpu or not tvm.target.codegen.llvm_is_valid_cpu(mcpu, "x86_64-linux-gnu"):
                raise CompileError("toolchain", "target %r: %r is not a CPU LLVM knows for x86-64 (e.g. x86-64-v3, "
                                   "skylake-avx512, znver4)" % (name, mcpu))
        target = {"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": mcpu, "num-cores": _cpu_count()}
        # A named CPU may lack this machine's instructions; it runs here only when it is the host's.
        runs = kind == "host" or mcpu == _host_cpu() or mcpu in ("x86-64", "x86-64-v2")
        return TargetSpec(name, kind, target, runs, kind == "host", {"fpack_imports": BlobPacker(x86_64=True)})
    if kind == "cuda":
        arch = arg or "sm_90"
        if not re.fullmatch(r"sm_[0-9]{2,3}[a-z]?", arch):
            raise CompileError("toolchain", "target %r: %r is not an SM architecture (e.g. sm_80, sm_90)" % (name, arch))
        from . import cuda_fatbin  # pylint: disable=import-outside-toplevel

        nvcc = nvcc or cuda_fatbin.find_nvcc()
        if nvcc is None:
            where = ("NVCC=%s is not an executable" % os.environ["NVCC"]) if os.environ.get("NVCC") else \
                "set NVCC or put the toolkit's bin/ on PATH"
            raise CompileError("toolchain", "target %s: no nvcc (the CUDA Toolkit compiles the kernels into a "
                               "fatbin): %s" % (name, where))
        if not _find_c_compiler():
            raise CompileError("toolchain", "target %s: no C compiler (g++, gcc or cc) to link the host code" % name)
        host = {"kind": "llvm", "mtriple": "x86_64-linux-gnu"}
        export = {"fpack_imports": BlobPacker(
            x86_64=True, transform=lambda blob: cuda_fatbin.rewrite_container(blob, "fatbin", nvcc, [arch]))}
        return TargetSpec(name, kind, {"kind": "cuda", "arch": arch}, False, False, export, host_target=host,
                          note="the kernels run on an NVIDIA GPU (%s); tune them on one (MetaSchedule's RPC "
                               "runner), then pass the database with --database" % arch)
    if kind == "aarch64":
        cc = shutil.which(AARCH64_CC)
        if cc is None:
            raise CompileError("toolchain", "target %s: no %s (cross compiler and linker): apt-get install "
                               "gcc-aarch64-linux-gnu" % (name, AARCH64_CC))
        target = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"], "num-cores": 4}
        if arg:
            if not tvm.target.codegen.llvm_is_valid_cpu(arg, "aarch64-linux-gnu"):
                raise CompileError("toolchain", "target %r: %r is not a CPU LLVM knows for aarch64 (e.g. cortex-a72, "
                                   "cortex-a76, neoverse-n1)" % (name, arg))
            target["mcpu"] = arg
        from tvm.support import cc as tvm_cc  # pylint: disable=import-outside-toplevel

        return TargetSpec(name, kind, target, False, False,
                          {"fcompile": tvm_cc.cross_compiler(cc), "fpack_imports": BlobPacker(x86_64=False)},
                          note="the library runs on 64-bit Arm Linux; tune on the board (MetaSchedule's RPC "
                               "runner), then pass the database with --database")
    raise CompileError("toolchain", "unknown target %r (host, cpu:NAME, cuda[:sm_XX], aarch64[:CPU])" % name)
