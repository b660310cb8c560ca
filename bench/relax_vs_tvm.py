"""sorun vs TVM 0.27's own runtime on the same Relax VM exports (bench/README.md, "Relax: sorun vs TVM 0.27").

usage (the TVM 0.27 venv's python; bench/run_relax_vs_tvm.sh builds sorun and runs this):
  python bench/relax_vs_tvm.py --driver BIN/bench/relax_bench_main --sorun BIN/tools/sorun
      [--runtime-lib BIN/api/libsorun_runtime_cpu.so] [--models mlp,cnn,tir_par,mlp_big] [--threads 1,2]
      [--rounds K] [--repeat R] [--warmup W] [--out DIR] [--markdown FILE]

Files: testdata/relax/{mlp,cnn,tir_par}.so (TVM 0.27 exports with TVM's reference inputs/outputs) and
mlp_big, built here into --out with TVM 0.27 (1024-2048-2048-512 dense layers, 28 MiB of float32 weights,
hand-scheduled TIR kernels with a parallel outer loop); --models also takes any other testdata/relax export with
its .npy files (e.g. dyn_batch). Each model as exported by TVM and as rewritten by
`sorun pack` (constants realigned in place, checksum record). Both runtimes run BOTH files.

One fresh process per measurement: bench/relax_bench_main (sorun's C++ API) and bench/tvm_relax_bench.py
(tvm.runtime.load_module + VirtualMachine, runtime-only import). For each model, file and thread count
(TVM_NUM_THREADS = sorun's ExecutorOptions::num_threads), K rounds, the two runtimes alternating which goes
first; the table shows medians over the rounds. Page cache warm (the file was read just before); one extra
"cold" process per runtime, model and file at the first thread count, after posix_fadvise(DONTNEED) on the
model file (the runtimes' own libraries stay cached). Every process's outputs are compared with TVM's
reference .npy bit for bit (exit 1 if one differs).
"""
import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TESTDATA = os.path.join(ROOT, "testdata", "relax")
TVM_HARNESS = os.path.join(HERE, "tvm_relax_bench.py")
BIG_DIMS = [1024, 2048, 2048, 512]


def sh(cmd, env=None, timeout=600):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout,
                       encoding="utf-8", errors="replace")
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd[:3]), p.returncode, (p.stderr or p.stdout)[-800:]))
    return p.stdout


# ---------------------------------------------------------------------------------------------------
# The big model (built in a child process: the compiler is imported there, never in a measured process)

def build_big(out_dir):
    """Writes out_dir/mlp_big.so, mlp_big.input_0.npy, mlp_big.output_0.npy (TVM's reference)."""
    import numpy as np
    import tvm
    from tvm import relax, s_tir, te
    from tvm.script import relax as R
    sys.path.insert(0, os.path.join(ROOT, "tests", "interop"))
    from relax_models import seeded, tvm_reference

    def dense(k_dim, n_dim, relu):
        """y[1,n] = x[1,k] . w[n,k] + b[n] (relu optional); the n loop parallel (__TVMBackendParallelLaunch)."""
        x = te.placeholder((1, k_dim), "float32", "x")
        w = te.placeholder((n_dim, k_dim), "float32", "w")
        b = te.placeholder((n_dim,), "float32", "b")
        k = te.reduce_axis((0, k_dim), "k")
        y = te.compute((1, n_dim), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), "y")
        z = te.compute((1, n_dim), (lambda i, j: te.max(y[i, j] + b[j], 0.0)) if relu else (lambda i, j: y[i, j] + b[j]),
                       "z")
        sch = s_tir.Schedule(te.create_prim_func([x, w, b, z]))
        _, j, _ = sch.get_loops(sch.get_sblock("y"))
        sch.reverse_compute_at(sch.get_sblock("z"), j)
        sch.parallel(j)
        return sch.mod["main"].with_attr("global_symbol", "dense_%d_%d" % (k_dim, n_dim))

    rng = seeded("mlp_big")
    layers = list(zip(BIG_DIMS, BIG_DIMS[1:]))
    bb = relax.BlockBuilder()
    gvs = [bb.add_func(dense(k, n, i + 1 < len(layers)), "dense_%d_%d" % (k, n)) for i, (k, n) in enumerate(layers)]
    x = relax.Var("x", R.Tensor((1, BIG_DIMS[0]), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = x
            for gv, (k, n) in zip(gvs, layers):
                w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype("float32")
                b = (rng.standard_normal((n,)) * 0.1).astype("float32")
                h = bb.emit(relax.call_tir(gv, [h, relax.const(w), relax.const(b)], R.Tensor((1, n), "float32")))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    so = os.path.join(out_dir, "mlp_big.so")
    relax.build(bb.get(), "llvm").export_library(so)
    xin = rng.standard_normal((1, BIG_DIMS[0])).astype("float32")
    np.save(os.path.join(out_dir, "mlp_big.input_0.npy"), xin)
    np.save(os.path.join(out_dir, "mlp_big.output_0.npy"), tvm_reference(so, [xin])[0])
    print("built %s (%d bytes, TVM %s)" % (so, os.path.getsize(so), tvm.__version__))


def model_dir(name, out):
    """The folder holding <name>.so, <name>.input_<k>.npy and <name>.output_<k>.npy: testdata/relax for the
    checked-in TVM 0.27 exports (mlp, cnn, tir_par, dyn_batch), --out for mlp_big (built on first use)."""
    if name == "mlp_big":
        if not os.path.exists(os.path.join(out, "mlp_big.output_0.npy")):
            sh([sys.executable, os.path.abspath(__file__), "--build-big", out], timeout=600)
        return out
    if not os.path.exists(os.path.join(TESTDATA, name + ".input_0.npy")):
        sys.exit("relax_vs_tvm: unknown model '%s': neither mlp_big nor testdata/relax/%s.so with its .npy files"
                 % (name, name))
    return TESTDATA


def numbered(d, name, kind):
    files, k = [], 0
    while os.path.exists(os.path.join(d, "%s.%s_%d.npy" % (name, kind, k))):
        files.append(os.path.join(d, "%s.%s_%d.npy" % (name, kind, k)))
        k += 1
    return files


# ---------------------------------------------------------------------------------------------------
# Measuring

def drop_from_page_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_through(path):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def measure(runtime, so, inputs, refs, threads, a, cold=False):
    import numpy as np
    with tempfile.TemporaryDirectory(prefix="relax_vs_tvm.") as outd:
        env = dict(os.environ, TVM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        env.pop("SORUN_NUM_THREADS", None)
        common = ["--warmup", str(a.warmup), "--repeat", str(a.repeat), "--output-dir", outd]
        if runtime == "sorun":
            cmd = [a.driver, "--model", so, "--threads", str(threads)] + sum((["--input", x] for x in inputs), []) + common
        else:
            cmd = [sys.executable, TVM_HARNESS, so] + inputs + common
        if cold:
            drop_from_page_cache(so)
        r = json.loads(sh(cmd, env=env).strip().splitlines()[-1])
        written = sorted(f for f in os.listdir(outd) if f.startswith("output_"))
        r["exact"] = len(written) == len(refs) and all(
            np.array_equal(np.load(os.path.join(outd, "output_%d.npy" % k)), np.load(ref)) for k, ref in enumerate(refs))
    return r


def row_values(runs):
    """Medians over the rounds of the reported metrics (ms, MiB)."""
    med = lambda f: statistics.median(f(r) for r in runs)  # noqa: E731
    return {
        "ready": med(lambda r: r["ready_ms"]), "first": med(lambda r: r["first_run_ms"]),
        "p50": med(lambda r: r["run_ms"]["median"]), "p99": med(lambda r: r["run_ms"]["p99"]),
        "bare": med(lambda r: r["bare_rss_bytes"] / 2**20), "init": med(lambda r: r["init_rss_bytes"] / 2**20),
        "peak": med(lambda r: r["peak_rss_bytes"] / 2**20),
        "own": med(lambda r: (r["peak_rss_bytes"] - r["bare_rss_bytes"]) / 2**20),
        "model": med(lambda r: (r["peak_rss_bytes"] - r["init_rss_bytes"]) / 2**20),
        "py": med(lambda r: r["py_call_ms"]["median"]) if "py_call_ms" in runs[0] else None,
    }


METRICS = [("ready", "load-to-ready ms, warm"), ("cold_ready", "load-to-ready ms, cold file"),
           ("cold_first", "first run ms, cold file"), ("first", "first run ms, warm"), ("p50", "steady p50 ms"),
           ("p99", "steady p99 ms"), ("peak", "peak RSS MiB"), ("own", "peak RSS - bare process MiB"),
           ("model", "peak RSS - after runtime init MiB")]


def fmt(v):
    if v is None:
        return "-"
    return "%.4f" % v if v < 0.1 else "%.3f" % v if v < 10 else "%.1f" % v


def stripped_bytes(path, out):
    tmp = os.path.join(out, os.path.basename(path) + ".stripped")
    sh(["strip", "-o", tmp, path])
    return os.path.getsize(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-big", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--driver", default=os.path.join(ROOT, "bazel-bin", "bench", "relax_bench_main"))
    ap.add_argument("--sorun", default=os.path.join(ROOT, "bazel-bin", "tools", "sorun"))
    ap.add_argument("--runtime-lib", default=os.path.join(ROOT, "bazel-bin", "api", "libsorun_runtime_cpu.so"))
    ap.add_argument("--models", default="mlp,cnn,tir_par,mlp_big")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(os.environ.get("SORUN_BENCH_MODEL_DIR", "/tmp/sorun_bench_models"),
                                                  "relax_vs_tvm"))
    ap.add_argument("--markdown")
    a = ap.parse_args()
    if a.build_big:
        os.makedirs(a.build_big, exist_ok=True)
        return build_big(a.build_big)

    t_start = time.time()
    load_before = os.getloadavg()
    os.makedirs(a.out, exist_ok=True)
    threads = [int(t) for t in a.threads.split(",")]
    rows, exact, lines = {}, [], []
    dirs = {name: model_dir(name, a.out) for name in a.models.split(",")}  # unknown names fail before measuring
    for name, d in dirs.items():
        inputs, refs = numbered(d, name, "input"), numbered(d, name, "output")
        export = os.path.join(d, name + ".so")
        packed = os.path.join(a.out, name + ".packed.so")
        sh([a.sorun, "pack", export, "-o", packed])
        for variant, so in (("export", export), ("packed", packed)):
            for rt in ("tvm", "sorun"):  # cold first (the file has not been read by this loop yet)
                r = measure(rt, so, inputs, refs, threads[0], a, cold=True)
                exact.append((name, variant, rt, "cold", r["exact"]))
                rows.setdefault((name, variant, rt, threads[0]), {})["cold"] = r
            read_through(so)
            for t in threads:
                runs = {"tvm": [], "sorun": []}
                for k in range(a.rounds):
                    for rt in (("tvm", "sorun") if k % 2 == 0 else ("sorun", "tvm")):
                        r = measure(rt, so, inputs, refs, t, a)
                        runs[rt].append(r)
                        exact.append((name, variant, rt, t, r["exact"]))
                for rt in runs:
                    rows.setdefault((name, variant, rt, t), {})["warm"] = runs[rt]
                print("measured %s %s %d thread(s)" % (name, variant, t), file=sys.stderr, flush=True)

    # The libraries TVM's runtime needs (the venv's; found without importing TVM here)
    tvm_libs = [os.path.join(os.path.dirname(importlib.util.find_spec(pkg).origin), "lib", lib)
                for pkg, lib in (("tvm", "libtvm_runtime.so"), ("tvm_ffi", "libtvm_ffi.so"))]
    tvm_size = sum(os.path.getsize(p) for p in tvm_libs)
    tvm_stripped = sum(stripped_bytes(p, a.out) for p in tvm_libs)
    sorun_size = stripped_bytes(a.runtime_lib, a.out) if os.path.exists(a.runtime_lib) else None

    sample = rows[(a.models.split(",")[0], "export", "tvm", threads[0])]["warm"][0]
    sample_s = rows[(a.models.split(",")[0], "export", "sorun", threads[0])]["warm"][0]
    load_after = os.getloadavg()
    lines.append("sorun %s (C++ API, bench/relax_bench_main) vs TVM %s runtime (Python, runtime-only import, "
                 "VirtualMachine; steady state timed in C++ by time_evaluator) | %s, %d cores | %d rounds of fresh "
                 "processes per runtime, alternating, each %d runs after %d warm-up | load average %.2f before / "
                 "%.2f after | %s UTC | %.0f s" % (
                     sample_s["version"], sample["version"], cpu_name(), os.cpu_count(), a.rounds, a.repeat,
                     a.warmup, load_before[0], load_after[0], time.strftime("%Y-%m-%d %H:%M", time.gmtime(t_start)),
                     time.time() - t_start))
    lines.append("")
    for t in threads:
        lines.append("**%d thread%s** (TVM_NUM_THREADS=%d, ExecutorOptions::num_threads=%d)" % (t, "" if t == 1 else "s", t, t))
        lines.append("")
        lines.append("| model | metric | TVM, TVM's .so | sorun, TVM's .so | sorun/TVM | TVM, packed .so | sorun, packed .so | sorun/TVM |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
        for name in a.models.split(","):
            vals = {}
            for variant in ("export", "packed"):
                for rt in ("tvm", "sorun"):
                    entry = rows[(name, variant, rt, t)]
                    v = row_values(entry["warm"])
                    cold = entry.get("cold")
                    v["cold_ready"] = cold["ready_ms"] if cold else None
                    v["cold_first"] = cold["first_run_ms"] if cold else None
                    vals[(variant, rt)] = v
            first = True
            for key, label in METRICS:
                if vals[("export", "tvm")][key] is None:
                    continue
                cells = []
                for variant in ("export", "packed"):
                    tv, sv = vals[(variant, "tvm")][key], vals[(variant, "sorun")][key]
                    cells += [fmt(tv), fmt(sv), "%.2f" % (sv / tv) if tv else "-"]
                lines.append("| %s | %s | %s |" % (name if first else "", label, " | ".join(cells)))
                first = False
        lines.append("")
    lines.append("Bare process RSS (before the runtime is touched): TVM harness %.1f MiB (python + numpy), after "
                 "`import tvm` %.1f MiB; sorun driver %.1f MiB, after Initialize %.1f MiB." % (
                     row_values(rows[(a.models.split(",")[0], "export", "tvm", threads[0])]["warm"])["bare"],
                     row_values(rows[(a.models.split(",")[0], "export", "tvm", threads[0])]["warm"])["init"],
                     row_values(rows[(a.models.split(",")[0], "export", "sorun", threads[0])]["warm"])["bare"],
                     row_values(rows[(a.models.split(",")[0], "export", "sorun", threads[0])]["warm"])["init"]))
    lines.append("Runtime on disk: TVM libtvm_runtime.so + libtvm_ffi.so %d B (%d B stripped); sorun "
                 "libsorun_runtime_cpu.so %s B stripped%s." % (
                     tvm_size, tvm_stripped, sorun_size if sorun_size else "?",
                     " (%.2fx TVM's stripped)" % (sorun_size / tvm_stripped) if sorun_size else ""))
    lines.append("TVM's steady p50 called from Python (vm[\"main\"](x), %d thread(s)), export / packed: %s." % (
        threads[0], ", ".join("%s %s / %s ms" % (n, fmt(row_values(rows[(n, "export", "tvm", threads[0])]["warm"])["py"]),
                                               fmt(row_values(rows[(n, "packed", "tvm", threads[0])]["warm"])["py"]))
                              for n in a.models.split(","))))
    bad = [e for e in exact if not e[4]]
    lines.append("Outputs: %d processes, every output equal to TVM's reference bit for bit: %s%s" % (
        len(exact), "yes" if not bad else "NO", "" if not bad else " (" + ", ".join("%s %s %s %s" % e[:4] for e in bad) + ")"))
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    return 1 if bad else 0


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


if __name__ == "__main__":
    sys.exit(main())
