"""doc_sample: a C/C++ block of the documentation, extracted at build time and compiled into a program.

    doc_sample(
        name = "readme_quickstart",      # the block marked <!-- doc-test: compile readme_quickstart -->
        page = "//:README.md",
        wrapper = "opencl_main.cc",      # optional: the block is a fragment placed into this file
        deps = ["//api:sorun"],
    )

//tests/docs:doc_samples_test runs the program (tests/docs/NAME in its runfiles) in a scratch directory of
fixtures (model.so is the zoo MLP) and expects exit 0.
"""

load("//:copts.bzl", "SORUN_COPTS")

def doc_sample(name, page, deps, wrapper = None, **kwargs):
    src = name + "_extracted.cc"
    native.genrule(
        name = name + "_src",
        srcs = [page] + ([wrapper] if wrapper else []),
        outs = [src],
        cmd = "python3 $(location :extract_sample.py) $(location %s) %s $@%s" % (
            page,
            name,
            " $(location %s)" % wrapper if wrapper else "",
        ),
        tools = [
            ":doc_blocks.py",
            ":extract_sample.py",
        ],
        message = "Extracting doc sample " + name,
    )
    native.cc_binary(
        name = name,
        srcs = [src],
        copts = SORUN_COPTS,
        deps = deps,
        **kwargs
    )
