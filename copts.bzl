"""Compiler options shared by every package of ours (not by third_party wrappers)."""

# Warnings are errors for our own code. System headers (/usr/include) are exempt by the compiler.
SORUN_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    "-fvisibility-inlines-hidden",
]

# Plain C for kernel libraries written against the TVM ABI.
SORUN_C_COPTS = [
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]
