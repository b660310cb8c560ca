"""sorun_static_core: one variant of the CPU-only runtime merged into a single static archive
(lib<name>.a) for applications built outside Bazel, with the system libraries it needs recorded in
lib<name>.linkopts. Linking the target from Bazel links exactly that archive (whole, since the runtime
registers its executors and backend explicitly), so the hello programs prove the archive complete.

With `noexc = True` the whole runtime below it (sorun and third-party C++ alike) is compiled with
NO_EXCEPTIONS_COPTS through a configuration transition on --cxxopt, so one build can hold both kinds of
archive (docs/embedded.md, "-fno-exceptions -fno-rtti")."""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

# The flags of the no-exception static core (C++ only: C sources need neither).
NO_EXCEPTIONS_COPTS = ["-fno-exceptions", "-fno-rtti"]

def _noexc_transition_impl(settings, attr):
    cxxopt = settings["//command_line_option:cxxopt"]
    if not attr.noexc:
        return {"//command_line_option:cxxopt": cxxopt}
    return {"//command_line_option:cxxopt": cxxopt + [f for f in NO_EXCEPTIONS_COPTS if f not in cxxopt]}

_noexc_transition = transition(
    implementation = _noexc_transition_impl,
    inputs = ["//command_line_option:cxxopt"],
    outputs = ["//command_line_option:cxxopt"],
)

def _archives_and_flags(deps):
    archives = []
    flags = []
    for dep in deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            flags.extend(linker_input.user_link_flags)
            for lib in linker_input.libraries:
                archive = lib.static_library or lib.pic_static_library
                if archive and archive not in archives:
                    archives.append(archive)
    return archives, [f for i, f in enumerate(flags) if f not in flags[:i]]

def _sorun_static_core_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    out = ctx.actions.declare_file("lib%s.a" % ctx.label.name)
    linkopts = ctx.actions.declare_file("lib%s.linkopts" % ctx.label.name)
    archives, flags = _archives_and_flags(ctx.attr.deps)
    mri = ["CREATE " + out.path] + ["ADDLIB " + a.path for a in archives] + ["SAVE", "END"]
    ctx.actions.run_shell(
        inputs = archives,
        tools = cc_toolchain.all_files,
        outputs = [out],
        command = "printf '%%s\\n' %s | %s -M" % (" ".join(["'%s'" % line for line in mri]), cc_toolchain.ar_executable),
        mnemonic = "SorunStaticCore",
        progress_message = "Merging %d archives into %s" % (len(archives), out.short_path),
    )
    ctx.actions.write(linkopts, " ".join(flags) + "\n")
    feature_configuration = cc_common.configure_features(ctx = ctx, cc_toolchain = cc_toolchain)
    library = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        static_library = out,
        alwayslink = True,
    )
    linker_input = cc_common.create_linker_input(
        owner = ctx.label,
        libraries = depset([library]),
        user_link_flags = depset(flags),
    )
    compilation = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps]).compilation_context
    return [
        DefaultInfo(files = depset([out, linkopts])),
        CcInfo(
            compilation_context = compilation,
            linking_context = cc_common.create_linking_context(linker_inputs = depset([linker_input])),
        ),
    ]

sorun_static_core = rule(
    implementation = _sorun_static_core_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo], mandatory = True, cfg = _noexc_transition),
        "noexc": attr.bool(default = False, doc = "compile deps with NO_EXCEPTIONS_COPTS"),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
        "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
    doc = "Merges the static libraries of `deps` (one sorun runtime variant) into lib<name>.a.",
)
