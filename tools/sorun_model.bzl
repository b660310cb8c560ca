"""sorun_model: packs a model into ONE shared library (or .tar) at build time with `sorun pack`.

    load("//tools:sorun_model.bzl", "sorun_model")

    sorun_model(
        name = "mlp",                      # produces mlp.so (or mlp.tar with tar = True)
        graph = "mlp.json",                # graph-executor JSON
        params = "mlp.params",             # params file (optional)
        kernels = [":my_kernels"],         # cc_library targets and/or .o/.a/.c files: the host code
        opencl = ["k.cl"],                 # OpenCL sources, each with its kernel description...
        opencl_fmaps = ["k.fmap.json"],    # ...in TVM's .tvm_meta.json layout
        cuda = ["k.ptx"],                  # PTX / cubin / fatbin images...
        cuda_fmaps = ["k.fmap.json"],      # ...with their kernel descriptions
    )

The result has the GraphExecutorFactory at the root, the kernel library under it and the device
modules under the library, exactly as TVM's export_library lays it out; it loads in sorun and in
TVM's runtime. The system C compiler links the library (as TVM's export does).
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# The PATH of every build action (.bazelrc's --action_env=PATH): the exporter's compiler finds as, ld there.
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

def _host_code_files(deps):
    files = []
    for dep in deps:
        if CcInfo in dep:
            for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
                for lib in linker_input.libraries:
                    archive = lib.pic_static_library or lib.static_library
                    if archive:
                        files.append(archive)
        else:
            files.extend(dep[DefaultInfo].files.to_list())
    return files

def _sorun_model_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + (".tar" if ctx.attr.tar else ".so"))
    if len(ctx.files.opencl) != len(ctx.files.opencl_fmaps):
        fail("opencl and opencl_fmaps must have the same length")
    if len(ctx.files.cuda) != len(ctx.files.cuda_fmaps):
        fail("cuda and cuda_fmaps must have the same length")
    host = _host_code_files(ctx.attr.kernels)
    args = ctx.actions.args()
    args.add("pack")
    args.add("-o", out)
    inputs = list(host)
    if ctx.file.graph:
        args.add("--graph", ctx.file.graph)
        inputs.append(ctx.file.graph)
    if ctx.file.params:
        args.add("--params", ctx.file.params)
        inputs.append(ctx.file.params)
    args.add_all(host, before_each = "--lib")
    for src, fmap in zip(ctx.files.opencl, ctx.files.opencl_fmaps):
        args.add("--opencl", src)
        args.add("--opencl-fmap", fmap)
        inputs.extend([src, fmap])
    for src, fmap in zip(ctx.files.cuda, ctx.files.cuda_fmaps):
        args.add("--cuda", src)
        args.add("--cuda-fmap", fmap)
        inputs.extend([src, fmap])
    if ctx.attr.module_name != "default":
        args.add("--module-name", ctx.attr.module_name)
    ctx.actions.run(
        executable = ctx.executable._sorun,
        arguments = [args],
        inputs = inputs,
        outputs = [out],
        mnemonic = "SorunPack",
        progress_message = "Packing model %s" % out.short_path,
        # The exporter links with $CC: the C compiler of the target's toolchain (Debian's aarch64 cross gcc
        # under --config=aarch64), so the packed library is for the machine the kernels were built for.
        env = {"CC": find_cpp_toolchain(ctx).compiler_executable, "PATH": _PATH},
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

sorun_model = rule(
    implementation = _sorun_model_impl,
    attrs = {
        "graph": attr.label(allow_single_file = [".json"]),
        "params": attr.label(allow_single_file = True),
        "kernels": attr.label_list(allow_files = True),
        "opencl": attr.label_list(allow_files = [".cl"]),
        "opencl_fmaps": attr.label_list(allow_files = [".json"]),
        "cuda": attr.label_list(allow_files = [".ptx", ".cubin", ".fatbin"]),
        "cuda_fmaps": attr.label_list(allow_files = [".json"]),
        "tar": attr.bool(default = False),
        "module_name": attr.string(default = "default"),
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
        "_sorun": attr.label(
            default = Label("//tools:sorun"),
            executable = True,
            cfg = "exec",
        ),
    },
    doc = "Packs graph + params + host code + device code into one model library with `sorun pack`.",
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
