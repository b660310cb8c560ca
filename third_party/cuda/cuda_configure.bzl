"""Repository rule exposing the local CUDA Toolkit (headers and nvcc) when one is installed.

The CUDA backend only needs the driver API header at build time (libcuda.so.1 is opened with dlopen at
run time), and the test data needs nvcc to produce PTX/cubin/fatbin. When no toolkit is found the
repository still exists, `CUDA_TOOLKIT_AVAILABLE` is False, and targets needing nvcc are skipped.
"""

def _cuda_configure_impl(repository_ctx):
    cuda_path = repository_ctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    header = repository_ctx.path(cuda_path + "/include/cuda.h")
    nvcc = repository_ctx.path(cuda_path + "/bin/nvcc")
    available = header.exists
    if available:
        repository_ctx.symlink(cuda_path + "/include", "include")
    else:
        repository_ctx.file("include/.empty", "")
    has_nvcc = available and nvcc.exists
    repository_ctx.file("defs.bzl", "\n".join([
        "CUDA_TOOLKIT_AVAILABLE = %s" % available,
        "NVCC_AVAILABLE = %s" % has_nvcc,
        "NVCC_PATH = \"%s\"" % (str(nvcc) if has_nvcc else ""),
        "",
    ]))
    repository_ctx.file("BUILD.bazel", "\n".join([
        "package(default_visibility = [\"//visibility:public\"])",
        "cc_library(",
        "    name = \"cuda_headers\",",
        "    hdrs = glob([\"include/cuda.h\", \"include/cudaTypedefs.h\", \"include/cuda_stdint.h\"]),",
        "    includes = [\"include\"],",
        ")",
        "",
    ]))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH"],
    local = True,
)
