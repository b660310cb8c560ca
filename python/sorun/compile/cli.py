"""The command line of `sorun compile` (python -m sorun.compile, the sorun-compile console script, and
`sorun compile` of the C++ CLI, which runs this module). Exit status: 0 written, 2 refused (the reason on
stderr as "sorun compile: STEP: MESSAGE"), 130 interrupted."""
import argparse
import json
import sys

from .errors import CompileError


def _parser():
    p = argparse.ArgumentParser(
        prog="sorun compile",
        description="Compile an ONNX model into one sorun model file with TVM 0.27 (docs/compile.md).")
    p.add_argument("onnx", help="the ONNX model")
    p.add_argument("-o", "--output", required=True, help="the model file to write (.so)")
    p.add_argument("--target", default="host",
                   help="host (default: this CPU), cpu:NAME (an LLVM CPU name), cuda[:sm_XX] (default sm_90), "
                        "aarch64[:CPU]")
    p.add_argument("--input", action="append", default=[], metavar="NAME:D1xD2x...",
                   help="an input's shape (repeatable); a dimension may be a name (dynamic, e.g. data:Nx3x224x224); "
                        "default: the file's shapes")
    p.add_argument("--tune", metavar="BUDGET",
                   help="tune with MetaSchedule on this machine: a trial count (64) or a time (90s, 10m, 1h); "
                        "needs --database")
    p.add_argument("--database", metavar="DIR",
                   help="MetaSchedule's database directory: tuning records are kept there (--tune) and applied; "
                        "kernels already recorded are not tuned again")
    p.add_argument("--no-check", action="store_true",
                   help="skip running the result against ONNX Runtime and TVM's VM before writing it")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of the check (default 1e-4)")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of the check (default 1e-5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the check's inputs (default 0)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    return p


def _report_lines(r):
    yield "wrote %s (%s bytes)" % (r["output"], format(r["bytes"], ","))
    yield "  model      %s" % r["model"]
    yield "  inputs     %s" % "; ".join(r["inputs"])
    yield "  target     %s  (%s)" % (r["target"]["name"], r["target"]["tvm"])
    if r["kernels"] is not None:
        yield "  kernels    %d" % r["kernels"]
    t = r["tuning"]
    if t is None:
        yield "  tuning     none (TVM's default schedules; --tune BUDGET --database DIR tunes)"
    elif "trials" in t:
        yield "  tuning     %d trials over %d kernels in %.0f s; %d records%s" % (
            t["trials"], t["tasks"], t["seconds"], t["records"], " (all reused: no tuning)" if t["reused"] else "")
    else:
        yield "  tuning     records applied from %s" % t["database"]
    yield "  constants  %d tensors, %d 64-byte aligned; checksum record %s" % (
        r["constants"]["tensors"], r["constants"]["aligned_after"], "written" if r["checksum"] else "none")
    c = r["check"]
    if c is None:
        yield "  check      skipped (--no-check)"
    else:
        yield "  check      %s, seed %d, inputs %s" % (c["what"], c["seed"], c["inputs"])
        for who, key in (("sorun", "sorun_vs_onnxruntime"), ("TVM's VM", "tvm_vm_vs_onnxruntime")):
            yield ("             %-8s vs ONNX Runtime: max abs diff %.3g, %.3g of the output's scale "
                   "(rtol %g, atol %g)") % (
                who, c[key]["max_abs"], c[key]["max_rel"], c["rtol"], c["atol"])
        yield "             sorun vs TVM's VM: %s" % ("bit-identical" if c["sorun_vs_tvm_vm_identical"] else "differ "
                                                       "within the tolerance")
    if r["note"]:
        yield "  note       %s" % r["note"]
    yield "  seconds    %s" % ", ".join("%s %.1f" % kv for kv in r["seconds"].items())


def main(argv=None):
    args = _parser().parse_args(argv)
    from . import onnx_input  # pylint: disable=import-outside-toplevel
    from .compiler import compile_onnx  # pylint: disable=import-outside-toplevel

    try:
        shapes = dict(onnx_input.parse_shape_flag(text) for text in args.input)
        report = compile_onnx(args.onnx, args.output, target=args.target, input_shapes=shapes, tune=args.tune,
                              database=args.database, check=not args.no_check, rtol=args.rtol, atol=args.atol,
                              seed=args.seed)
    except CompileError as e:
        print("sorun compile: %s: %s" % (e.step, e), file=sys.stderr)
        return 130 if "interrupted" in str(e) else 2
    for line in _report_lines(report):
        print(line)
    if args.json:  # the report as JSON too
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


def console_main():
    """The sorun-compile console script."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
