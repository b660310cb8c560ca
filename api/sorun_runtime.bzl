"""sorun_runtime: one variant of the front door (api/sorun.h) — which backends and which executor kinds
it links. Each variant is the same sources plus one backends_*.cc and one executors_*.cc file, chosen at
link time (explicit registration, no static initializers)."""

load("//:copts.bzl", "SORUN_COPTS")
load("//:version.bzl", "SORUN_VERSION")

_BACKENDS = {
    # Every backend: CPU, OpenCL (ICD loader), CUDA (driver opened on first use), and .tar models.
    "all": ("backends_all.cc", [
        "//backends/cuda",
        "//backends/opencl",
        "//serialization:tar_loader",
    ]),
    # The CPU backend only (part of the runtime core): the embedded footprint.
    "cpu": ("backends_cpu.cc", []),
}

_EXECUTORS = {
    "all": ("executors_all.cc", ["//graph_executor", "//relax:vm"]),
    "graph": ("executors_graph.cc", ["//graph_executor"]),
    "vm": ("executors_vm.cc", ["//relax:vm"]),
}

def sorun_runtime(name, backends, executors, visibility = None):
    """A cc_library of the front door with `backends` ("all" | "cpu") and `executors` ("all" | "graph" | "vm")."""
    backends_src, backends_deps = _BACKENDS[backends]
    executors_src, executors_deps = _EXECUTORS[executors]
    native.cc_library(
        name = name,
        srcs = [
            backends_src,
            executors_src,
            "device_names.cc",
            "executor.cc",
            "model.cc",
            "model_loading.cc",
            "ndarray.cc",
            "sorun.cc",
            "sorun_impl.h",
        ],
        # sorun.h is the public API; model_loading.h is internal (in-tree tools and tests).
        hdrs = [
            "model_loading.h",
            "sorun.h",
        ],
        copts = SORUN_COPTS,
        # sorun::Version() (api/sorun.cc): the one version string.
        local_defines = ['SORUN_VERSION_STRING=\\"%s\\"' % SORUN_VERSION],
        # No implicit lib<name>.so from this rule: libsorun.so is the C API library.
        linkstatic = 1,
        alwayslink = 1,
        visibility = visibility,
        deps = [
            "//base:executor_types",
            "//base:load_hooks",
            "//base:status",
            "//executor",
            "//runtime",
            "//serialization:loader",
        ] + backends_deps + executors_deps,
    )
