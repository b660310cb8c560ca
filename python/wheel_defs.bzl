"""One sorun extension and wheel per CPython version (docs/python.md, python/build_wheels.sh).

pybind11 has no stable-ABI (abi3) build, so each CPython gets its own extension: sorun_wheel("3.X")
compiles the two binding files against @cpython//:headers_3_X and links them with the runtime
objects (//api:sorun), which are built once and shared by every version.
"""

load("//:copts.bzl", "SORUN_COPTS")

# The wheel's platform tag: the lowest manylinux_2_X that `auditwheel show` accepts for this build on
# Debian 12 (glibc 2.36, GCC 12). python/build_wheels.sh fails when auditwheel disagrees.
MANYLINUX_TAG = "manylinux_2_35_x86_64"

PACKAGE_FILES = [
    "sorun/__init__.py",
    "sorun/__init__.pyi",
    "sorun/py.typed",
    # sorun compile (the 'compile' extra: TVM 0.27 and ONNX; docs/compile.md)
    "sorun/compile/__init__.py",
    "sorun/compile/__main__.py",
    "sorun/compile/blob_export.py",
    "sorun/compile/checks.py",
    "sorun/compile/cli.py",
    "sorun/compile/compiler.py",
    "sorun/compile/cuda_fatbin.py",
    "sorun/compile/errors.py",
    "sorun/compile/onnx_input.py",
    "sorun/compile/targets.py",
    "sorun/compile/tuning.py",
    "sorun/compile/tvm_worker.py",
]

def wheel_name(version, py_version):
    abi = "cp" + py_version.replace(".", "")
    return "sorun-%s-%s-%s-%s.whl" % (version, abi, abi, MANYLINUX_TAG)

def sorun_wheel(py_version, version, manual):
    """:bindings_cp3X, :_sorun_cp3X.so and :wheel_cp3X for CPython `py_version` ("3.9" ... "3.13")."""
    abi = "cp" + py_version.replace(".", "")
    tags = ["manual"] if manual else []
    native.cc_library(
        name = "bindings_" + abi,
        srcs = ["pack_binding.cc", "py_support.cc", "sorun_module.cc"],
        hdrs = ["pack_binding.h", "py_support.h"],
        # pybind11 throws C++ exceptions by design (its error path to Python); hidden visibility is
        # what pybind11 requires of extension code.
        copts = SORUN_COPTS + ["-fvisibility=hidden"],
        deps = [
            "//api:sorun",
            "//packer:blob_assembly",  # sorun.compile's export hook (python/pack_binding.h)
            "//packer:relax_pack",  # RealignLibraryBlob, for the same hook
            "//serialization:blob_checksum",
            "//third_party/pybind11",
            "@cpython//:headers_" + py_version.replace(".", "_"),
        ],
        alwayslink = 1,
        tags = tags,
    )

    # The whole runtime linked in statically (every backend: OpenCL and CUDA are opened by the runtime
    # on first use), zlib and libgcc too; exports per the version script. --as-needed drops the
    # libz.so that the zlib wrapper names, since the static copy serves every reference;
    # tests/python/test_packaging.py checks the resulting DT_NEEDED list and the exports.
    native.cc_binary(
        name = "_sorun_%s.so" % abi,
        additional_linker_inputs = [":sorun_extension.lds"],
        linkopts = [
            "-Wl,--version-script=$(location :sorun_extension.lds)",
            "-Wl,--as-needed",
            "-Wl,--exclude-libs,ALL",
            "-l:libz.a",
            "-static-libgcc",
        ],
        linkshared = 1,
        deps = [":bindings_" + abi],
        tags = tags,
    )
    native.genrule(
        name = "wheel_" + abi,
        srcs = [":_sorun_%s.so" % abi] + PACKAGE_FILES,
        outs = [wheel_name(version, py_version)],
        cmd = "python3 $(location build_wheel.py) $@ %s %s %s $(location :_sorun_%s.so) %s" % (
            version,
            py_version,
            MANYLINUX_TAG,
            abi,
            " ".join(["$(location %s)" % f for f in PACKAGE_FILES]),
        ),
        message = "Packing the sorun wheel for CPython " + py_version,
        tools = ["build_wheel.py"],
        tags = tags,
        visibility = ["//visibility:public"],
    )
