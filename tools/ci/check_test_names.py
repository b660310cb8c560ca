#!/usr/bin/env python3
"""Checks that every unit test is named after the source it tests.

A test file tests/<pkg>/<stem>_test.cc (or .c) in a unit-test package must have a source file
<src>.{cc,h,c} somewhere outside tests/ with stem == src or stem starting with src + "_" (an aspect
of that source: tar_archive_gzip_test.cc tests tar_archive.cc's gzip path). Integration suites
(whole-model, cross-package) live in the packages listed in INTEGRATION and are exempt, as are the
files in EXEMPT, each with its reason. Prints the offenders; exit 1 if any.

usage: tools/ci/check_test_names.py   (from the repository root)
"""
import subprocess
import sys
from pathlib import PurePosixPath

INTEGRATION = {"e2e", "robustness", "perf", "device", "fuzz", "interop", "python", "serving"}
EXEMPT = {
    "tests/cuda/cuda_gpu_test.cc": "the real-GPU suite (tests/cuda/stage_gpu_tests.sh), all of backends/cuda",
    "tests/cuda/cuda_driver_abi_test.cc": "checks cuda_driver_api.h against the toolkit's cuda.h",
    "tests/tools/cli_errors_test.cc": "the sorun CLI end to end (tools/sorun_main.cc): error exits",
    "tests/tools/cli_pack_inspect_test.cc": "the sorun CLI end to end: pack and inspect",
    "tests/tools/cli_run_bench_test.cc": "the sorun CLI end to end: run and bench",
    "tests/tools/cli_verify_test.cc": "the sorun CLI end to end: verify",
    "tests/tools/cli_units_test.cc": "the CLI's small units (flags, text table, latency stats) together",
}


def main():
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    sources = {PurePosixPath(f).stem for f in files
               if not f.startswith("tests/") and PurePosixPath(f).suffix in (".cc", ".h", ".c")}
    bad = []
    for f in files:
        p = PurePosixPath(f)
        if not f.startswith("tests/") or not p.name.endswith(("_test.cc", "_test.c")):
            continue
        if p.parts[1] in INTEGRATION or f in EXEMPT:
            continue
        stem = p.name.rsplit("_test.", 1)[0]
        if not any(stem == s or stem.startswith(s + "_") for s in sources):
            bad.append(f)
    for f in bad:
        print(f"{f}: not named after a source file (foo_test.cc tests foo.cc; foo_aspect_test.cc an aspect of it)")
    print(f"test names: {len(bad)} misnamed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
