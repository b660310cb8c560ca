"""The Relax interop checks: TVM 0.27 and TVM 0.16 Relax VM exports in sorun, sorun-packed exports in TVM
(driven by tests/interop/run_relax_interop.sh; README.md beside this file, "Relax VM exports").

usage: python relax_interop_test.py --sorun BIN --out DIR [--tvm027-python PY] [--tvm016-python PY]
                                    [--jobs N] [--setup GROUP:STATUS:SECONDS:MESSAGE]...
                                    [--skip-027 REASON] [--skip-016 REASON]

Builds the models of relax_models.py (with --tvm027-python, the venv of install_tvm027.sh) and of
relax_models_016.py (with --tvm016-python, the venv of install_tvm.sh) into OUT/models/tvm027|tvm016/<name>/,
then checks each model with the sorun CLI. --skip-027 / --skip-016 REASON list that TVM's checks as skipped
(its venv could not be installed). Prints one line per check (`PASS|FAIL|SKIP  group/name  seconds
message`) and ends with "N passed, M failed, K skipped"; writes OUT/relax_interop_results.xml (JUnit-style,
counted by tools/ci/count_tests.py) and OUT/relax_interop_results.txt. Exit status 1 when a check failed.
Runs with the TVM 0.27 venv's Python (numpy); TVM itself only runs in subprocesses.
"""
import argparse
import glob
import json
import os
import re
import shutil
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interop_test import Fail, Results, Skip, last_line, sh  # noqa: E402  (the interop job's reporting)

MODELS_027 = ["mlp", "cnn", "cnn_fused", "onnx_cnn", "dyn_tuple", "tir_par", "mlp_params", "opencl_mlp", "bool_if",
              "prim_scale", "sort_topk"]
MODELS_016 = ["mlp", "cnn"]  # relax_models_016.MODELS
MUTATIONS = ["opcode", "register", "length_short", "length_long"]
OPENCL_RTOL, OPENCL_ATOL = 1e-5, 1e-6
BLOB_SYMBOLS = ["__tvm_ffi__library_bin", "__tvm_ffi_library_bin", "__tvm_dev_mblob"]  # 0.22+, 0.21, <= 0.20
VM_KINDS = [b"relax.VMExecutable", b"relax.Executable"]


def model_ids(with_027=True, with_016=True):
    """(check name, TVM generation, model name): 0.16 models are named tvm016_<name>."""
    ids = [(m, "tvm027", m) for m in MODELS_027] if with_027 else []
    return ids + ([("tvm016_" + m, "tvm016", m) for m in MODELS_016] if with_016 else [])


def planned_checks(gen):
    """The checks of one model, in run order: group names."""
    checks = ["relax.build", "relax.inspect", "relax.run", "relax.pack", "relax.pack.verify", "relax.pack.sorun"]
    if gen == "tvm027":
        checks.append("relax.pack.tvm")
    return checks + ["relax.refuse." + m for m in MUTATIONS]


# ---------------------------------------------------------------------------------------------------
# Locating the blob and the VM executable's last instruction in an export (for the mutations)

def elf_symbol_offset(data, name):
    """(file offset, size) of the defined ELF64 symbol NAME (.dynsym or .symtab), else None."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise Fail("not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for sh_type, sh_offset, sh_size, sh_link, sh_entsize in [(s[1], s[4], s[5], s[6], s[9]) for s in sections]:
        if sh_type not in (2, 11) or not sh_entsize:  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strtab = sections[sh_link][4]
        for off in range(sh_offset, sh_offset + sh_size, sh_entsize):
            st_name, _, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, off)
            end = data.index(b"\0", strtab + st_name)
            if data[strtab + st_name:end].decode() == name and 0 < st_shndx < len(sections):
                sec = sections[st_shndx]
                return sec[4] + (st_value - sec[3]), st_size
    return None


def blob_and_vm_end(data):
    """(blob file offset, offset just past the VM executable's payload). New container: the payload is
    module 0's length-prefixed bytes; legacy container: it ends where the next entry's key starts."""
    for sym in BLOB_SYMBOLS:
        found = elf_symbol_offset(data, sym)
        if found:
            break
    else:
        raise Fail("no blob symbol (%s)" % ", ".join(BLOB_SYMBOLS))
    blob, size = found
    nbytes, = struct.unpack_from("<Q", data, blob)
    if sym == "__tvm_ffi__library_bin":
        pos = blob + 8
        for _ in range(2):  # indptr, child_indices
            count, = struct.unpack_from("<Q", data, pos)
            pos += 8 + 8 * count
        klen, = struct.unpack_from("<Q", data, pos)
        kind = data[pos + 8:pos + 8 + klen]
        if kind not in VM_KINDS:
            raise Fail("module 0 of %s is %r, not a VM executable" % (sym, kind))
        plen, = struct.unpack_from("<Q", data, pos + 8 + klen)
        return blob, pos + 16 + klen + plen
    # Legacy: u64 count, then (key, payload)* with the VM executable first, "_lib" (no payload) next and
    # "_import_tree" last; the VM payload is not length-prefixed, so it ends at the next key.
    ends = [data.find(struct.pack("<Q", len(key)) + key, blob, blob + 8 + nbytes)
            for key in (b"_lib", b"_import_tree")]
    ends = [e for e in ends if e >= 0]
    if not ends:
        raise Fail("no _lib or _import_tree entry in %s" % sym)
    return blob, min(ends)


def mutate(src, dst, how):
    """Writes a mutated copy of the export SRC: the last VM instruction (a Ret: words 2, reg) with its opcode
    or its register word inverted, or the blob's payload length cut by 64 bytes / set past the file."""
    with open(src, "rb") as f:
        data = bytearray(f.read())
    blob, vm_end = blob_and_vm_end(bytes(data))
    opcode, reg = struct.unpack_from("<qq", data, vm_end - 16)
    if opcode != 2 or not 0 <= reg < (1 << 54):
        raise Fail("the VM payload does not end with a Ret instruction (words %d, %d): layout changed?" % (opcode, reg))
    nbytes, = struct.unpack_from("<Q", data, blob)
    if how == "opcode":
        struct.pack_into("<Q", data, vm_end - 16, opcode ^ 0xFFFFFFFFFFFFFFFF)
    elif how == "register":
        struct.pack_into("<Q", data, vm_end - 8, reg ^ 0xFFFFFFFFFFFFFFFF)
    elif how == "length_short":
        struct.pack_into("<Q", data, blob, nbytes - 64)
    elif how == "length_long":
        struct.pack_into("<Q", data, blob, nbytes + len(data))
    with open(dst, "wb") as f:
        f.write(data)
    os.chmod(dst, 0o755)
    return "%s at file offset %d" % ("blob length" if how.startswith("length") else "last instruction",
                                     blob if how.startswith("length") else vm_end - 16)


# ---------------------------------------------------------------------------------------------------

class RelaxInterop:
    def __init__(self, args, results):
        self.sorun_bin = os.path.abspath(args.sorun)
        self.out = args.out
        self.args = args
        self.results = results
        self.models = os.path.join(self.out, "models")
        self.work = os.path.join(self.out, "work")
        self.state = {}  # (check name, group) -> "PASS" | "FAIL" | "SKIP"

    def sorun(self, *args, timeout=120):
        return sh([self.sorun_bin] + list(args), timeout=timeout)

    def folder(self, gen, name):
        return os.path.join(self.models, gen, name)

    @staticmethod
    def meta(d):
        with open(os.path.join(d, "meta.json")) as f:
            return json.load(f)

    def needs(self, mid, group, what):
        if self.state.get((mid, group)) != "PASS":
            raise Skip("needs %s (%s did not pass)" % (what, group))

    # --- checks
    def build(self, gen, name, log):
        d = self.folder(gen, name)
        if not os.path.exists(os.path.join(d, "meta.json")):
            lines = [l for l in log.splitlines() if name in l and "FAILED" in l]
            raise Fail("not built: " + (lines[-1] if lines else last_line(log) or "no output"))
        m = self.meta(d)
        return "TVM %s, %s, inputs %s, %d output(s), %.1f KiB, built in %.1f s" % (
            m["tvm"], m["device"], ",".join(m["inputs"]), m["num_outputs"],
            os.path.getsize(os.path.join(d, "model.so")) / 1024.0, m["build_seconds"])

    def inspect(self, gen, name):
        """`sorun inspect --json` agrees with the export: main's parameters are the model's inputs (names in
        order; dtype and static dims those of the input arrays), it is runnable with no refusal, and every
        callee it classes as a kernel is a symbol the library defines."""
        import numpy as np

        d = self.folder(gen, name)
        so = os.path.join(d, "model.so")
        rc, out, err = self.sorun("inspect", "--json", so)
        if rc != 0:
            raise Fail("sorun inspect failed (exit %d): %s" % (rc, last_line(err)))
        rx = json.loads(out).get("relax") or {}
        names = self.meta(d)["inputs"]
        mains = [f for f in rx.get("functions", []) if f.get("name") == "main"]
        if not mains or mains[0].get("params") != names:
            raise Fail("inspect's main is %s, TVM's parameters are %s" % (mains[0] if mains else "missing", names))
        shown = rx.get("inputs", [])
        if [i.get("name") for i in shown] != names:
            raise Fail("inspect's inputs %s, TVM's %s" % ([i.get("name") for i in shown], names))
        for k, i in enumerate(shown):
            if i.get("dtype") in (None, "unknown"):  # main does not check it (mlp_params' weights: num_input 1)
                continue
            a = np.load(os.path.join(d, "input_%d.npy" % k), mmap_mode="r")
            dims = i.get("dims") or []
            if i["dtype"] != str(a.dtype) or len(dims) != a.ndim or any(x not in (-1, y) for x, y in zip(dims, a.shape)):
                raise Fail("input %s: inspect says %s %s, the input array is %s %s" % (
                    i.get("name"), i.get("dtype"), dims, a.dtype, list(a.shape)))
        if not rx.get("runnable") or rx.get("refusals"):
            raise Fail("inspect says not runnable: %s" % rx.get("refusals"))
        with open(so, "rb") as f:
            data = f.read()
        prefix = "__tvm_ffi_" if gen == "tvm027" else ""
        kernels = [c["name"] for c in rx.get("callees", []) if c.get("class") == "kernel"]
        missing = [k for k in kernels if not elf_symbol_offset(data, prefix + k)]
        if not kernels or missing:
            raise Fail("kernels %s not defined by the library (kernels: %s)" % (missing, kernels))
        return "main(%s), %d kernels, %d callees, runnable" % (", ".join(names), len(kernels),
                                                               len(rx.get("callees", [])))

    def run_sorun(self, lib, d, out):
        """`sorun run LIB` on the model folder D's inputs -> list of outputs."""
        import numpy as np

        m = self.meta(d)
        shutil.rmtree(out, ignore_errors=True)
        cmd = ["run", lib, "--device", m["device"], "--output-dir", out]
        for k, n in enumerate(m["inputs"]):
            cmd += ["--input", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % k))]
        rc, _, err = self.sorun(*cmd)
        if rc != 0:
            msg = last_line(err)
            if m["device"] == "opencl" and ("not present" in msg or "platform" in msg.lower()):
                raise Skip("no OpenCL device for sorun here: " + msg)
            raise Fail("sorun run failed (exit %d): %s" % (rc, msg))
        files = sorted(glob.glob(os.path.join(out, "output_*.npy")),
                       key=lambda p: int(re.search(r"output_(\d+)\.npy$", p).group(1)))
        return [np.load(f) for f in files]

    @staticmethod
    def compare(d, got, exact):
        """Outputs GOT against TVM's output_<k>.npy in D: equal (exact) or within the OpenCL tolerance."""
        import numpy as np

        want = [np.load(os.path.join(d, "output_%d.npy" % k)) for k in range(len(glob.glob(os.path.join(
            d, "output_*.npy"))))]
        if len(got) != len(want):
            raise Fail("%d outputs, TVM has %d" % (len(got), len(want)))
        worst = 0.0
        for k, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape or g.dtype != w.dtype:
                raise Fail("output %d is %s %s, TVM's is %s %s" % (k, g.dtype, g.shape, w.dtype, w.shape))
            err = float(np.max(np.abs(g.astype("float64") - w.astype("float64")))) if g.size else 0.0
            worst = max(worst, err)
            if exact and not np.array_equal(g, w):
                raise Fail("output %d differs from TVM's (max abs error %.3g; CPU outputs must be identical)" % (k, err))
            if not exact and not np.allclose(g, w, rtol=OPENCL_RTOL, atol=OPENCL_ATOL):
                raise Fail("output %d differs from TVM's beyond rtol %g atol %g (max abs error %.3g)" % (
                    k, OPENCL_RTOL, OPENCL_ATOL, err))
        return "%d output(s) %s" % (len(got), "identical to TVM's" if exact else "max abs error %.3g" % worst)

    def run(self, gen, name, mid):
        d = self.folder(gen, name)
        got = self.run_sorun(os.path.join(d, "model.so"), d, os.path.join(self.work, mid, "run"))
        return self.compare(d, got, self.meta(d)["device"] == "cpu")

    def packed(self, mid):
        return os.path.join(self.work, mid, "packed.so")

    def pack(self, gen, name, mid):
        out = self.packed(mid)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        rc, so, err = self.sorun("pack", os.path.join(self.folder(gen, name), "model.so"), "-o", out)
        if rc != 0:
            raise Fail("sorun pack failed (exit %d): %s" % (rc, last_line(err)))
        return "%.1f KiB: %s" % (os.path.getsize(out) / 1024.0, last_line(so))

    def pack_verify(self, mid):
        self.needs(mid, "relax.pack", "the packed file")
        rc, so, err = self.sorun("verify", self.packed(mid))
        if rc != 0:
            raise Fail("sorun verify failed (exit %d): %s" % (rc, last_line(err) or last_line(so)))
        return last_line(so)

    def pack_sorun(self, gen, name, mid):
        self.needs(mid, "relax.pack", "the packed file")
        d = self.folder(gen, name)
        got = self.run_sorun(self.packed(mid), d, os.path.join(self.work, mid, "packed_run"))
        return self.compare(d, got, self.meta(d)["device"] == "cpu")

    def pack_tvm(self, gen, name, mid):
        """The packed file in TVM 0.27: relax.VirtualMachine(load_module(packed), cpu) on the same inputs."""
        import numpy as np

        self.needs(mid, "relax.pack", "the packed file")
        d = self.folder(gen, name)
        m = self.meta(d)
        out = os.path.join(self.work, mid, "packed_tvm")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        script = ("import sys, numpy as np; sys.path.insert(0, %r); import relax_models as rm; "
                  "ins = [np.load('%s/input_%%d.npy' %% k) for k in range(%d)]; "
                  "rm.save_arrays(%r, [], rm.tvm_reference(%r, ins, %r))" % (
                      HERE, d, len(m["inputs"]), out + os.sep, self.packed(mid), m.get("scalar_inputs", [])))
        rc, so, err = sh([self.args.tvm027_python, "-c", script], timeout=120)
        if rc != 0:
            text = so + err
            if m["device"] == "opencl" and "opencl" in text and "loader of that name is not registered" in text:
                raise Skip("TVM 0.27's wheel has no OpenCL runtime: " + last_line(text))
            raise Fail("TVM 0.27 could not run the packed file (exit %d): %s" % (rc, last_line(text)))
        got = [np.load(os.path.join(out, "output_%d.npy" % k)) for k in range(len(glob.glob(out + "/output_*.npy")))]
        return "TVM 0.27 runs it: " + self.compare(d, got, True)

    def refuse(self, gen, name, mid, how):
        self.needs(mid, "relax.run", "the unmutated model running in sorun (else a refusal proves nothing)")
        bad = os.path.join(self.work, mid, "mutated_%s.so" % how)
        where = mutate(os.path.join(self.folder(gen, name), "model.so"), bad, how)
        rc, _, err = self.sorun("inspect", bad)
        if rc < 0 or rc > 128:
            raise Fail("sorun inspect died (exit %d, a signal): %s" % (rc, last_line(err)))
        d = self.folder(gen, name)
        try:
            self.run_sorun(bad, d, os.path.join(self.work, mid, "mutated_run"))
        except Fail as e:
            msg = str(e)
            code = re.search(r"exit (-?\d+)", msg)
            if not code or int(code.group(1)) != 1 or "sorun: error:" not in msg:
                raise Fail("not a clean refusal (want exit 1 and 'sorun: error: ...'): " + msg)
            return "refused (%s mutated): %s" % (where, msg.split("sorun: error:", 1)[1].strip()[:200])
        raise Fail("sorun ran the mutated file (%s changed) without an error" % where)

    # --- the whole run
    def checks_of(self, mid, gen, name, build_log):
        steps = [("relax.build", self.build, (gen, name, build_log)), ("relax.inspect", self.inspect, (gen, name)),
                 ("relax.run", self.run, (gen, name, mid)), ("relax.pack", self.pack, (gen, name, mid)),
                 ("relax.pack.verify", self.pack_verify, (mid,)), ("relax.pack.sorun", self.pack_sorun, (gen, name, mid))]
        if gen == "tvm027":
            steps.append(("relax.pack.tvm", self.pack_tvm, (gen, name, mid)))
        steps += [("relax.refuse." + how, self.refuse, (gen, name, mid, how)) for how in MUTATIONS]
        return steps

    def run_all(self, mids, build_logs):
        for mid, gen, name in mids:
            for group, fn, fargs in self.checks_of(mid, gen, name, build_logs[gen]):
                if group != "relax.build" and self.state.get((mid, "relax.build")) != "PASS":
                    self.results.add(group, mid, "SKIP", "not built")
                    continue
                self.results.run(group, mid, fn, *fargs)
                self.state[(mid, group)] = self.results.rows[-1][2]

    def build_models(self, gen, python, script, extra):
        t0 = time.time()
        out = os.path.join(self.models, gen)
        shutil.rmtree(out, ignore_errors=True)
        rc, so, err = sh([python, os.path.join(HERE, script), out] + extra, timeout=600)
        print("%s builds: %.1f s (exit %d)" % (gen, time.time() - t0, rc), flush=True)
        return so + err


def write_results(results, out_dir, seconds):
    """Results.write names its files interop_*; the Relax job's are relax_interop_results.{xml,txt}."""
    stage = os.path.join(out_dir, ".relax_results")
    os.makedirs(stage, exist_ok=True)
    results.out_dir = stage
    results.write(seconds)
    for ext in ("xml", "txt"):
        os.replace(os.path.join(stage, "interop_results." + ext), os.path.join(out_dir, "relax_interop_results." + ext))
    os.rmdir(stage)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sorun", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tvm027-python")
    ap.add_argument("--tvm016-python")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--setup", action="append", default=[], help="GROUP:STATUS:SECONDS:MESSAGE")
    ap.add_argument("--skip-027")
    ap.add_argument("--skip-016")
    args = ap.parse_args()
    t0 = time.time()
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    results = Results(args.out)
    for s in args.setup:
        name, status, seconds, message = s.split(":", 3)
        results.add("setup", name, status, message, float(seconds))
    skips = {"tvm027": args.skip_027 if args.tvm027_python else args.skip_027 or "no --tvm027-python",
             "tvm016": args.skip_016 if args.tvm016_python else args.skip_016 or "no --tvm016-python"}
    job = RelaxInterop(args, results)
    logs = {"tvm027": "", "tvm016": ""}
    if not skips["tvm027"]:
        logs["tvm027"] = job.build_models("tvm027", args.tvm027_python, "relax_models.py", ["--jobs", str(args.jobs)])
    if not skips["tvm016"]:
        logs["tvm016"] = job.build_models("tvm016", args.tvm016_python, "relax_models_016.py", [])
    for gen in ("tvm027", "tvm016"):
        if skips[gen]:
            for mid, g, _ in model_ids(gen == "tvm027", gen == "tvm016"):
                for group in planned_checks(g):
                    results.add(group, mid, "SKIP", skips[gen])
    job.run_all([m for m in model_ids() if not skips[m[1]]], logs)
    write_results(results, args.out, time.time() - t0)
    passed, failed, skipped = results.counts()
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
