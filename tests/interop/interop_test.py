"""The sorun <-> TVM interop checks (driven by tests/interop/run_interop.sh; README.md beside this file).

usage: python interop_test.py --sorun BIN --zoo DIR --out DIR [--tvm-python PY] [--jobs N]
                              [--rtol R] [--atol A] [--skip-all REASON]
                              [--setup STATUS:SECONDS:MESSAGE]

With --tvm-python (the venv of install_tvm.sh) it builds the models of tvm_models.py with TVM, then
runs every check; with --skip-all REASON it only lists the checks as skipped (TVM unavailable).
--setup records the TVM installation as the first check (STATUS PASS, SKIP or FAIL). Prints
one line per check and ends with "N passed, M failed, K skipped"; writes OUT/interop_results.xml
(JUnit-style: one <testcase> per check, a <failure> child for a failure, <skipped/> for a skip) and
OUT/interop_results.txt (one "STATUS check message" line per check). Exit status 1 when a check failed.

Runs with any Python 3 that has numpy (the TVM venv's, normally); --skip-all needs only the stdlib.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TVM_RUN = os.path.join(ROOT, "tools", "interop", "tvm_run_packed.py")
MODELS_PY = os.path.join(HERE, "tvm_models.py")

CPU_MODELS = ["mlp", "multi_output", "sort_topk", "resnet18", "mobilenet"]
OPENCL_MODELS = ["mlp_opencl", "cnn_opencl"]
VARIANT_MODELS = ["mlp_link_params", "mlp_system_lib"]
ALL_MODELS = CPU_MODELS + OPENCL_MODELS + VARIANT_MODELS
DEPLOY_TAR = ["mlp", "multi_output"]  # tvm_models.DEPLOY_TAR
ZOO_MODELS = ["mlp", "cnn", "resblock", "digits"]
NO_TVM_OPENCL = "TVM's runtime here has no OpenCL (hhb-tvm is built with USE_OPENCL=OFF)"


def planned_checks():
    """Every check, in run order: (group, name)."""
    checks = [("build", m) for m in ALL_MODELS]
    for m in CPU_MODELS + OPENCL_MODELS + VARIANT_MODELS:
        checks.append(("tvm_deploy_so_in_sorun", m))
        checks.append(("three_file_in_sorun", m))
    for m in CPU_MODELS + OPENCL_MODELS:
        checks += [("pack_lib_so.sorun", m), ("pack_lib_so.tvm", m), ("pack_lib_tar.sorun", m),
                   ("pack_lib_tar.tvm", m)]
    for m in DEPLOY_TAR:
        checks.append(("tvm_deploy_tar_in_sorun", m))
    checks.append(("sorun_tar_in_tvm", "mlp"))
    for m in ZOO_MODELS + ["mlp_opencl"]:
        checks.append(("zoo_in_tvm", m))
    for m in ALL_MODELS:
        checks.append(("format.inspect", m))
    checks += [("format.fact", f) for f in ["device_index_on_cpu", "context_slots", "fp16_helpers",
                                            "tar_export_is_gzip", "opencl_repeated_launch_tags",
                                            "kernels_check_ndim_dtype_not_shape", "link_params", "system_lib"]]
    return checks


class Skip(Exception):
    pass


class Fail(Exception):
    pass


class Results:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.rows = []  # (group, name, status, message, seconds)

    def add(self, group, name, status, message, seconds=0.0):
        self.rows.append((group, name, status, message, seconds))
        print("%-4s  %-40s %6.1fs  %s" % (status, group + "/" + name, seconds, message), flush=True)

    def run(self, group, name, fn, *args):
        t0 = time.time()
        try:
            msg = fn(*args)
            self.add(group, name, "PASS", msg or "", time.time() - t0)
        except Skip as e:
            self.add(group, name, "SKIP", str(e), time.time() - t0)
        except Fail as e:
            self.add(group, name, "FAIL", str(e), time.time() - t0)
        except Exception as e:  # noqa: BLE001  (a bug in a check is a failed check, not a crash)
            self.add(group, name, "FAIL", "%s: %s" % (type(e).__name__, e), time.time() - t0)

    def counts(self):
        c = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for r in self.rows:
            c[r[2]] += 1
        return c["PASS"], c["FAIL"], c["SKIP"]

    @staticmethod
    def xml_text(text):
        """Characters XML 1.0 cannot carry (control characters from a tool's output) become spaces."""
        return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", " ", text)

    def write(self, total_seconds):
        passed, failed, skipped = self.counts()
        suites = ET.Element("testsuites", tests=str(len(self.rows)), failures=str(failed), skipped=str(skipped),
                            time="%.2f" % total_seconds)
        suite = ET.SubElement(suites, "testsuite", name="interop", tests=str(len(self.rows)), failures=str(failed),
                              skipped=str(skipped), errors="0", time="%.2f" % total_seconds)
        for group, name, status, message, seconds in self.rows:
            case = ET.SubElement(suite, "testcase", classname="interop." + group, name=name, time="%.2f" % seconds)
            message = self.xml_text(message)
            if status == "FAIL":
                ET.SubElement(case, "failure", message=message[:1000]).text = message
            elif status == "SKIP":
                ET.SubElement(case, "skipped", message=message[:1000])
            else:
                ET.SubElement(case, "system-out").text = message
        ET.ElementTree(suites).write(os.path.join(self.out_dir, "interop_results.xml"), encoding="UTF-8",
                                     xml_declaration=True)
        with open(os.path.join(self.out_dir, "interop_results.txt"), "w") as f:
            for group, name, status, message, seconds in self.rows:
                f.write("%s %s/%s %s\n" % (status, group, name, message))
            f.write("%d passed, %d failed, %d skipped\n" % (passed, failed, skipped))


def sh(cmd, timeout=300, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env,
                           encoding="utf-8", errors="replace")
    except subprocess.TimeoutExpired:
        raise Fail("timed out after %d s: %s" % (timeout, " ".join(cmd)))
    return p.returncode, p.stdout, p.stderr


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


class Interop:
    def __init__(self, args, results):
        self.a = args
        self.r = results
        self.models_dir = os.path.join(args.out, "models")
        self.work = os.path.join(args.out, "work")
        self.built = {}  # model -> manifest
        self.build_errors = {}
        self.opencl_missing = None  # reason, once known

    # ------------------------------------------------------------------ helpers
    def sorun(self, *args, timeout=300):
        return sh([self.a.sorun] + list(args), timeout=timeout)

    def model(self, name):
        if name not in self.built:
            raise Fail("not built: " + self.build_errors.get(name, "build failed"))
        return os.path.join(self.models_dir, name), self.built[name]

    def input_flags(self, d, manifest):
        flags = []
        for k, f in manifest["inputs"].items():
            flags += ["--input", "%s=%s" % (k, os.path.join(d, f))]
        return flags

    def reference(self, d, manifest):
        import numpy as np

        return [np.load(os.path.join(d, f)) for f in manifest["outputs"]]

    def compare(self, got, want, what):
        """Raises Fail unless every output matches within rtol/atol; returns the error summary."""
        import numpy as np

        if len(got) != len(want):
            raise Fail("%s: %d outputs, the reference has %d" % (what, len(got), len(want)))
        worst_abs, worst_rel, identical = 0.0, 0.0, True
        for i, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape or g.dtype != w.dtype:
                raise Fail("%s: output %d is %s%s, the reference %s%s" % (what, i, g.dtype, list(g.shape), w.dtype,
                                                                         list(w.shape)))
            identical = identical and bool(np.array_equal(g, w))
            if g.size == 0:
                continue
            if np.issubdtype(g.dtype, np.floating):
                gg, ww = g.astype(np.float64), w.astype(np.float64)
                diff = np.abs(gg - ww)
                worst_abs = max(worst_abs, float(diff.max()))
                worst_rel = max(worst_rel, float((diff / np.maximum(np.abs(ww), 1e-30)).max()))
                if not np.allclose(gg, ww, rtol=self.a.rtol, atol=self.a.atol):
                    raise Fail("%s: output %d differs: max abs error %.3g, max rel error %.3g (rtol %g, atol %g)" % (
                        what, i, float(diff.max()), worst_rel, self.a.rtol, self.a.atol))
            elif not np.array_equal(g, w):
                raise Fail("%s: output %d (%s) differs in %d of %d elements" % (what, i, g.dtype,
                                                                               int((g != w).sum()), g.size))
        return "max abs error %.3g, max rel error %.3g%s" % (worst_abs, worst_rel,
                                                              " (bit-identical)" if identical else "")

    def sorun_run(self, lib, d, manifest, out, extra=(), device=None):
        """`sorun run` -> list of outputs."""
        import numpy as np

        shutil.rmtree(out, ignore_errors=True)
        args = ["run", lib] + list(extra) + self.input_flags(d, manifest) + ["--output-dir", out]
        if device:
            args += ["--device", device]
        rc, so, se = self.sorun(*args)
        if rc != 0:
            err = last_line(se)
            if device and device.startswith("opencl") and ("not present" in err or "platform" in err.lower()):
                self.opencl_missing = err
                raise Skip("no OpenCL device for sorun here: " + err)
            raise Fail("sorun run failed (exit %d): %s" % (rc, err))
        files = sorted(glob.glob(os.path.join(out, "output_*.npy")),
                       key=lambda p: int(re.search(r"output_(\d+)\.npy$", p).group(1)))
        return [np.load(f) for f in files]

    def tvm_run(self, lib, d=None, manifest=None, expect=None, load_only=False, timeout=300):
        """TVM's runtime in a fresh process (a crash is one failed check): (rc, summary or None, output)."""
        cmd = [self.a.tvm_python, TVM_RUN, lib, "--json", "--rtol", str(self.a.rtol), "--atol", str(self.a.atol)]
        if load_only:
            cmd.append("--load-only")
        if manifest:
            cmd += self.input_flags(d, manifest)
            cmd += ["--expect=" + os.path.join(d, f) for f in manifest["outputs"]]
        for e in expect or []:
            cmd += ["--expect=" + e]
        rc, so, se = sh(cmd, timeout=timeout)
        summary = None
        for line in so.splitlines():
            if line.startswith("JSON "):
                summary = json.loads(line[5:])
        return rc, summary, so + se

    def tvm_result(self, rc, summary, text, what):
        if summary is None or rc not in (0, 1):
            raise Fail("%s: TVM could not load/run it: %s" % (what, last_line(text)))
        worst_abs = max([o.get("max_abs_error", 0.0) for o in summary.get("outputs", [])] or [0.0])
        worst_rel = max([o.get("max_rel_error", 0.0) for o in summary.get("outputs", [])] or [0.0])
        identical = all(o.get("bit_identical", False) for o in summary.get("outputs", []))
        tree = summary.get("tree", {})
        if rc != 0:
            raise Fail("%s: outputs differ in TVM: max abs error %.3g, max rel error %.3g" % (what, worst_abs, worst_rel))
        return "tree %s; max abs error %.3g, max rel error %.3g%s" % (
            tree_text(tree), worst_abs, worst_rel, " (bit-identical)" if identical else "")

    def inspect(self, path):
        rc, so, se = self.sorun("inspect", path, "--json")
        if rc != 0:
            raise Fail("sorun inspect failed: " + last_line(se))
        return json.loads(so)

    def device_for(self, manifest):
        return "opencl" if manifest["variant"] == "opencl" else None

    def skip_opencl_in_tvm(self, lib):
        """TVM here cannot load an OpenCL model: its blob walk stops at the "opencl" entry (after the
        factory and _lib parsed). Skip with TVM's own words, or fail when it breaks for another reason."""
        rc, summary, text = self.tvm_run(lib, load_only=True)
        if rc == 0 and summary:
            raise Skip("TVM loaded it (tree %s) but cannot run it: %s" % (tree_text(summary["tree"]), NO_TVM_OPENCL))
        if "opencl" in text and "loader of that name is not registered" in text:
            err = last_line(text)
            raise Skip('%s: tvm.runtime.load_module fails with "%s"' % (
                NO_TVM_OPENCL, err if len(err) < 130 else err[:130] + " ..."))
        raise Fail("TVM failed to load it for another reason than the missing OpenCL loader: " + last_line(text))

    # ------------------------------------------------------------------ phase 1: TVM builds
    def build_all(self):
        os.makedirs(self.models_dir, exist_ok=True)
        if self.a.reuse_models:  # development: keep the models of an earlier run
            reused = [m for m in ALL_MODELS if os.path.exists(os.path.join(self.models_dir, m, "manifest.json"))]
            for m in reused:
                with open(os.path.join(self.models_dir, m, "manifest.json")) as f:
                    self.built[m] = json.load(f)
                self.r.add("build", m, "PASS", "reused %s/%s (--reuse-models)" % (self.models_dir, m))
            if len(reused) == len(ALL_MODELS):
                return
        # Two workers: the two big models (about 30 s each on 2 cores) go to different workers.
        jobs = max(1, self.a.jobs)
        queues = [[] for _ in range(jobs)]
        order = ["resnet18", "mobilenet"] + [m for m in ALL_MODELS if m not in ("resnet18", "mobilenet")]
        order = [m for m in order if m not in self.built]
        for i, m in enumerate(order):
            queues[i % jobs].append(m)
        procs = []
        t0 = time.time()
        for q in queues:
            if not q:
                continue
            log = open(os.path.join(self.models_dir, "build_%s.log" % q[0]), "w")
            p = subprocess.Popen([self.a.tvm_python, MODELS_PY, self.models_dir] + q, stdout=subprocess.PIPE,
                                 stderr=log, universal_newlines=True)
            procs.append((p, log, q))
        lines = []
        for p, log, q in procs:
            try:
                out, _ = p.communicate(timeout=900)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            log.close()
            lines += out.splitlines()
        done = {}
        for line in lines:
            try:
                rec = json.loads(line)
                done[rec["model"]] = rec
            except ValueError:
                pass
        for m in ALL_MODELS:
            if m in self.built:
                continue
            rec = done.get(m)
            if rec and rec["ok"]:
                with open(os.path.join(self.models_dir, m, "manifest.json")) as f:
                    man = json.load(f)
                self.built[m] = man
                shapes = ", ".join("%s %s%s" % (k, v[1], v[0]) for k, v in man["input_shapes"].items())
                self.r.add("build", m, "PASS", "TVM %s built %s (%s) and exported deploy.so, lib.so, lib.tar, graph, "
                           "params in %.1f s (relay.build %.1f s); inputs %s; reference: %s" % (
                               man["tvm_version"], m, man["target"], man["total_seconds"], man["build_seconds"],
                               shapes, man["reference"]), rec["seconds"])
            else:
                err = rec["error"] if rec else "the build worker died (see %s/build_*.log)" % self.models_dir
                self.build_errors[m] = err
                self.r.add("build", m, "FAIL", err, rec["seconds"] if rec else time.time() - t0)

    # ------------------------------------------------------------------ checks 1 + 2: TVM output in sorun
    def check_deploy_so(self, m):
        d, man = self.model(m)
        got = self.sorun_run(os.path.join(d, "deploy.so"), d, man, os.path.join(self.work, m, "deploy_so"),
                             device=self.device_for(man))
        return "sorun run deploy.so%s vs %s: %s" % (
            " --device opencl (PoCL)" if self.device_for(man) else "", "TVM llvm build" if self.device_for(man)
            else "TVM", self.compare(got, self.reference(d, man), "sorun"))

    def check_three_file(self, m):
        d, man = self.model(m)
        got = self.sorun_run(os.path.join(d, "lib.so"), d, man, os.path.join(self.work, m, "three_file"),
                             extra=["--graph", os.path.join(d, "graph.json"), "--params", os.path.join(d, "model.params")],
                             device=self.device_for(man))
        return "sorun run lib.so --graph --params: " + self.compare(got, self.reference(d, man), "sorun")

    def pack(self, m, lib_name, out_name):
        d, man = self.model(m)
        out = os.path.join(self.work, m, out_name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if os.path.exists(out):
            os.remove(out)
        rc, so, se = self.sorun("pack", "-o", out, "--lib", os.path.join(d, lib_name), "--graph",
                                os.path.join(d, "graph.json"), "--params", os.path.join(d, "model.params"))
        if rc != 0:
            raise Fail("sorun pack --lib %s failed (exit %d): %s" % (lib_name, rc, last_line(se)))
        if not out.endswith(".tar"):
            rc, so2, se2 = self.sorun("verify", out)
            if rc != 0:
                raise Fail("sorun verify of the packed library failed: " + last_line(se2))
        return out

    def check_pack_sorun(self, m, lib_name):
        d, man = self.model(m)
        out = self.pack(m, lib_name, "packed_from_%s.so" % lib_name.replace(".", "_"))
        got = self.sorun_run(out, d, man, os.path.join(self.work, m, "packed_%s_out" % lib_name.replace(".", "_")),
                             device=self.device_for(man))
        size = os.path.getsize(out)
        return "sorun pack --lib %s -> %s (%s, verify OK), sorun run: %s" % (
            lib_name, os.path.basename(out), "%.1f MiB" % (size / 2**20) if size >= 2**20 else "%.0f KiB" % (size / 1024),
            self.compare(got, self.reference(d, man), "sorun"))

    def check_pack_tvm(self, m, lib_name):
        d, man = self.model(m)
        out = os.path.join(self.work, m, "packed_from_%s.so" % lib_name.replace(".", "_"))
        if not os.path.exists(out):
            raise Fail("no packed library (the sorun pack check failed)")
        if man["variant"] == "opencl":
            self.skip_opencl_in_tvm(out)
        rc, summary, text = self.tvm_run(out, d, man)
        return "tvm.runtime.load_module(%s)['default'](tvm.cpu()): %s" % (
            os.path.basename(out), self.tvm_result(rc, summary, text, "TVM"))

    def check_deploy_tar(self, m):
        d, man = self.model(m)
        got = self.sorun_run(os.path.join(d, "deploy.tar"), d, man, os.path.join(self.work, m, "deploy_tar"))
        return "sorun run deploy.tar (TVM's gzip-compressed tar): " + self.compare(got, self.reference(d, man), "sorun")

    def check_sorun_tar_in_tvm(self, m):
        d, man = self.model(m)
        out = self.pack(m, "lib.tar", "sorun_packed.tar")
        rc, summary, text = self.tvm_run(out, d, man)
        return "sorun pack -o sorun_packed.tar --lib lib.tar, then tvm.runtime.load_module(.tar): " + self.tvm_result(
            rc, summary, text, "TVM")

    # ------------------------------------------------------------------ check 3: the zoo in TVM
    def check_zoo(self, m):
        lib = os.path.join(self.a.zoo, m + ".so")
        if not os.path.exists(lib):
            raise Fail("%s is missing (bazel build //testdata/models/... first)" % lib)
        info = self.inspect(lib)
        if m == "mlp_opencl":
            self.skip_opencl_in_tvm(lib)
        names = [i["name"] for i in info["inputs"]]
        if len(names) != 1:
            raise Fail("expected one graph input, sorun inspect lists %s" % names)
        manifest = {"inputs": {names[0]: m + "_input.npy"}, "outputs": [m + "_expected.npy"]}
        rc, summary, text = self.tvm_run(lib, self.a.zoo, manifest)
        return "TVM ran sorun's %s.so vs %s_expected.npy: %s" % (m, m, self.tvm_result(rc, summary, text, "TVM"))

    # ------------------------------------------------------------------ check 4: format facts
    def check_inspect(self, m):
        """sorun inspect --json of TVM's deploy.so agrees with what TVM built."""
        d, man = self.model(m)
        info = self.inspect(os.path.join(d, "deploy.so"))
        want_tree = [("GraphExecutorFactory", [1]), ("_lib", [2] if man["variant"] == "opencl" else [])]
        if man["variant"] == "opencl":
            want_tree.append(("opencl", []))
        tree = [(x["type_key"], x["children"]) for x in info["modules"]]
        problems = []
        if tree != want_tree:
            problems.append("module tree %s, expected %s" % (tree, want_tree))
        if info["blob"]["section"] != ".rodata":
            problems.append("blob in %s" % info["blob"]["section"])
        inputs = {i["name"]: [i["shape"], i["dtype"]] for i in info["inputs"]}
        if inputs != man["input_shapes"]:
            problems.append("inputs %s, TVM %s" % (inputs, man["input_shapes"]))
        outputs = [[o["shape"], o["dtype"]] for o in info["outputs"]]
        if outputs != man["output_shapes"]:
            problems.append("outputs %s, TVM %s" % (outputs, man["output_shapes"]))
        params = sorted(t["name"] for t in info["params"]["tensors"])
        if params != man["params"]:
            problems.append("params %s, TVM %s" % (params, man["params"]))
        if info["graph"]["missing_kernels"]:
            problems.append("kernels not exported: %s" % info["graph"]["missing_kernels"])
        if info["checksum"]["present"]:
            problems.append("TVM's library has a sorun checksum record?")
        if problems:
            raise Fail("; ".join(problems))
        return "tree %s, %d inputs, %d outputs, %d params, %d kernels: as TVM built them" % (
            " ".join("%s%s" % t for t in tree), len(inputs), len(outputs), len(params), len(info["graph"]["kernels"]))

    def dyn_symbols(self, lib):
        """{name: (type, binding, defined)} of the dynamic symbol table (readelf)."""
        rc, so, se = sh(["readelf", "--dyn-syms", "-W", lib])
        if rc != 0:
            raise Fail("readelf failed: " + last_line(se))
        syms = {}
        for line in so.splitlines():
            f = line.split()
            if len(f) >= 8 and f[0].endswith(":") and f[0][:-1].isdigit():
                syms[f[7].split("@")[0]] = (f[3], f[4], f[6] != "UND")
        return syms

    def fact_device_index(self):
        d, man = self.model("mlp")
        g = json.load(open(os.path.join(d, "graph.json")))
        di = g["attrs"].get("device_index")
        if not di or di[0] != "list_int" or set(di[1]) != {1}:
            raise Fail("graph attrs device_index = %s (docs/format.md correction 1 says: present, all 1)" % (di,))
        return "CPU-only graph JSON carries device_index (list_int, all %d entries = 1)" % len(di[1])

    def fact_context_slots(self):
        seen = {}
        for m in ["mlp", "resnet18", "mlp_opencl"]:
            d, man = self.model(m)
            syms = self.dyn_symbols(os.path.join(d, "deploy.so"))
            seen[m] = sorted(s for s, v in syms.items() if v[2] and (s.startswith("__TVM") or s == "__tvm_module_ctx"))
        problems = []
        if any("__TVMBackendParallelBarrier" in v for v in seen.values()):
            problems.append("__TVMBackendParallelBarrier appeared")
        if "__TVMBackendAllocWorkspace" in seen["mlp"] or "__TVMBackendAllocWorkspace" not in seen["resnet18"]:
            problems.append("workspace slots not as documented")
        if "__tvm_module_ctx" in seen["mlp"] or "__tvm_module_ctx" not in seen["mlp_opencl"]:
            problems.append("__tvm_module_ctx not only with device code")
        if problems:
            raise Fail("; ".join(problems) + ": %s" % seen)
        return "slots defined only when used: " + "; ".join("%s: %s" % (k, " ".join(v)) for k, v in seen.items())

    def fact_fp16(self):
        d, man = self.model("mlp")
        syms = self.dyn_symbols(os.path.join(d, "lib.so"))
        got = {s: syms.get(s) for s in ["__truncsfhf2", "__extendhfsf2"]}
        if any(v is None or not v[2] or v[1] != "WEAK" for v in got.values()):
            raise Fail("fp16 helpers: %s (docs/format.md correction 3: weak definitions in the library)" % got)
        return "__truncsfhf2, __extendhfsf2 are WEAK definitions in TVM's library (not runtime imports)"

    def fact_tar(self):
        import tarfile

        d, man = self.model("mlp")
        out = []
        for name in ["lib.tar", "deploy.tar"]:
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                magic = f.read(2)
            if magic != b"\x1f\x8b":
                raise Fail("%s is not gzip-compressed (magic %r)" % (name, magic))
            with tarfile.open(path) as t:
                out.append("%s = gzip(tar of %s)" % (name, ", ".join(sorted(t.getnames()))))
        return "; ".join(out) + "; sorun reads both (checks tvm_deploy_tar_in_sorun, pack_lib_tar.*)"

    def fact_launch_tags(self):
        d, man = self.model("cnn_opencl")
        info = self.inspect(os.path.join(d, "deploy.so"))
        repeated = []
        for dm in info["device_modules"]:
            for k in dm["kernels"]:
                tags = k["launch_param_tags"]
                if len(tags) != len(set(tags)):
                    repeated.append("%s (%d tags, %d distinct)" % (k["name"], len(tags), len(set(tags))))
        if not repeated:
            raise Fail("no OpenCL kernel with repeated launch_param_tags any more: update docs/format.md")
        return "OpenCL kernels with repeated launch_param_tags: " + ", ".join(repeated)

    def fact_kernel_checks(self):
        """Kernels assert ndim and dtype but not shape values (docs/format.md correction 7)."""
        d, man = self.model("mlp")
        g = json.load(open(os.path.join(d, "graph.json")))
        node = next(n for n in g["nodes"] if n["op"] != "null")
        shapes = g["attrs"]["shape"][1]
        eids = [g["node_row_ptr"][i[0]] + i[1] for i in node["inputs"]] + [g["node_row_ptr"][g["nodes"].index(node)]]
        script = (
            "import sys, json, numpy as np, tvm\n"
            "f = tvm.runtime.load_module(sys.argv[1])[sys.argv[2]]\n"
            "shapes = json.loads(sys.argv[3])\n"
            "def call(s0, dtype='float32'):\n"
            "    args = [tvm.nd.array(np.zeros(s0, dtype))] + [tvm.nd.array(np.zeros(s, 'float32')) for s in shapes[1:]]\n"
            "    try:\n"
            "        f(*args); return 'accepted'\n"
            "    except Exception:\n"
            "        return 'rejected'\n"
            "s = list(shapes[0]); wrong = s[:-1] + [s[-1] + 1]\n"
            "print(json.dumps({'right': call(s), 'shape': call(wrong), 'ndim': call(s + [1]),"
            " 'dtype': call(s, 'float64')}))\n")
        rc, so, se = sh([self.a.tvm_python, "-c", script, os.path.join(d, "lib.so"), node["attrs"]["func_name"],
                         json.dumps([shapes[e] for e in eids])])
        if rc != 0:
            raise Fail("TVM failed: " + last_line(se))
        got = json.loads(so.strip().splitlines()[-1])
        want = {"right": "accepted", "shape": "accepted", "ndim": "rejected", "dtype": "rejected"}
        if got != want:
            raise Fail("kernel %s: %s, docs/format.md correction 7 says %s" % (node["attrs"]["func_name"], got, want))
        return "%s: wrong ndim and dtype rejected by the kernel, a wrong shape value accepted (the runtime must check)" % (
            node["attrs"]["func_name"])

    def fact_link_params(self):
        d, man = self.model("mlp_link_params")
        g = json.load(open(os.path.join(d, "graph.json")))
        nulls = [n["name"] for n in g["nodes"] if n["op"] == "null"]
        info = self.inspect(os.path.join(d, "deploy.so"))
        problems = []
        if nulls != ["data"]:
            problems.append("graph input nodes %s (expected only 'data')" % nulls)
        if man["params"]:
            problems.append("TVM still returns params %s" % man["params"])
        if "_lookup_linked_param" in info["host_functions"]:
            problems.append("the library exports _lookup_linked_param")
        if problems:
            raise Fail("; ".join(problems))
        return "link-params: weights compiled into the kernels; graph inputs %s, no params, no _lookup_linked_param" % (
            nulls)

    def fact_system_lib(self):
        d, man = self.model("mlp_system_lib")
        syms = self.dyn_symbols(os.path.join(d, "deploy.so"))
        undefined = sorted(s for s, v in syms.items() if not v[2] and s.startswith("TVM"))
        if "TVMBackendRegisterSystemLibSymbol" not in undefined:
            raise Fail("system-lib library does not import TVMBackendRegisterSystemLibSymbol: %s" % undefined)
        return "system-lib deploy.so imports %s by name (sorun exports them; check tvm_deploy_so_in_sorun/%s)" % (
            ", ".join(undefined), "mlp_system_lib")

    # ------------------------------------------------------------------ all
    def run_all(self):
        self.build_all()
        r = self.r
        for m in CPU_MODELS + OPENCL_MODELS + VARIANT_MODELS:
            r.run("tvm_deploy_so_in_sorun", m, self.check_deploy_so, m)
            r.run("three_file_in_sorun", m, self.check_three_file, m)
        for m in CPU_MODELS + OPENCL_MODELS:
            r.run("pack_lib_so.sorun", m, self.check_pack_sorun, m, "lib.so")
            r.run("pack_lib_so.tvm", m, self.check_pack_tvm, m, "lib.so")
            r.run("pack_lib_tar.sorun", m, self.check_pack_sorun, m, "lib.tar")
            r.run("pack_lib_tar.tvm", m, self.check_pack_tvm, m, "lib.tar")
        for m in DEPLOY_TAR:
            r.run("tvm_deploy_tar_in_sorun", m, self.check_deploy_tar, m)
        r.run("sorun_tar_in_tvm", "mlp", self.check_sorun_tar_in_tvm, "mlp")
        for m in ZOO_MODELS + ["mlp_opencl"]:
            r.run("zoo_in_tvm", m, self.check_zoo, m)
        for m in ALL_MODELS:
            r.run("format.inspect", m, self.check_inspect, m)
        for name, fn in [("device_index_on_cpu", self.fact_device_index), ("context_slots", self.fact_context_slots),
                         ("fp16_helpers", self.fact_fp16), ("tar_export_is_gzip", self.fact_tar),
                         ("opencl_repeated_launch_tags", self.fact_launch_tags),
                         ("kernels_check_ndim_dtype_not_shape", self.fact_kernel_checks),
                         ("link_params", self.fact_link_params),
                         ("system_lib", self.fact_system_lib)]:
            r.run("format.fact", name, fn)


def tree_text(t):
    if not t:
        return "?"
    if not t.get("imports"):
        return t["type_key"]
    return "%s->[%s]" % (t["type_key"], ",".join(tree_text(c) for c in t["imports"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sorun", required=True)
    ap.add_argument("--zoo", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tvm-python")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--skip-all")
    ap.add_argument("--reuse-models", action="store_true", help="keep models built by an earlier run in OUT")
    ap.add_argument("--setup")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.sorun = os.path.abspath(args.sorun)
    args.zoo = os.path.abspath(args.zoo)
    t0 = time.time()
    results = Results(args.out)
    if args.setup:
        status, seconds, message = args.setup.split(":", 2)
        results.add("setup", "install_tvm", status, message, float(seconds))
    if args.skip_all:
        for group, name in planned_checks():
            results.add(group, name, "SKIP", args.skip_all)
    else:
        if not args.tvm_python:
            ap.error("--tvm-python or --skip-all is required")
        Interop(args, results).run_all()
        planned = set(planned_checks())
        ran = set((g, n) for g, n, *_ in results.rows if g != "setup")
        if planned != ran:  # keeps planned_checks() (the --skip-all list) in step with run_all()
            results.add("driver", "check_list", "FAIL", "planned_checks() and run_all() differ: %s" % sorted(
                planned ^ ran))
    total = time.time() - t0
    results.write(total)
    passed, failed, skipped = results.counts()
    print("interop checks took %.1f s; results in %s" % (total, os.path.join(args.out, "interop_results.xml")))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
