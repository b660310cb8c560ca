"""MetaSchedule (TVM's tuner) behind `sorun compile --tune`: measures candidate schedules of every fused
kernel on this machine and keeps the best in a JSON database directory the user names, so a second compile
of the same model (same kernels, same target) applies the records without tuning again.

The pipeline is TVM 0.27's own `static_shape_tuning` one (relax.pipeline): DecomposeOpsForInference,
CanonicalizeBindings, the zero pipeline (legalize, fuse), MetaScheduleTuneIRMod's tune_relax, then
MetaScheduleApplyDatabase; kernels without a record keep TVM's default schedule. Two departures, both about
this runtime's hosts: the builder's workers skip `import tvm.s_tir.tensor_intrin` (over a minute of
TVMScript parsing per worker, and MetaSchedule restarts its build workers for every batch, so with TVM's
default build function every build on a small machine times out), and the budget may be wall time: one
MetaSchedule run without a trial limit, stopped at the deadline (a measure callback, after the batch that
crosses it has been written to the database; a builder that skips what is not yet built).
"""
import json
import os
import re
import threading
import time

from .errors import CompileError, last_line


def parse_budget(text):
    """--tune TEXT -> ("trials", n) for 'N' / 'Ntrials', ("seconds", s) for '90s', '10m', '1h'."""
    m = re.fullmatch(r"\s*(\d+)\s*(trials?|s|sec|m|min|h)?\s*", text or "")
    if not m or int(m.group(1)) <= 0:
        raise CompileError("tune", "--tune %r: expected a trial count (e.g. 64) or a time (90s, 10m, 1h)" % text)
    n, unit = int(m.group(1)), (m.group(2) or "trials")
    if unit.startswith("trial"):
        return ("trials", n)
    return ("seconds", n * {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}[unit])


def search_strategy(trials, tasks):
    """MetaSchedule's evolutionary search with a population sized to the budget: the default (512
    candidates, 50 unmeasured at least, 4 generations per batch) spends about 40 s per kernel per batch
    on 2 cores before measuring anything, which small budgets cannot afford; 64 candidates and 2
    generations per batch take a few seconds and converge on the same kind of schedules as the budget
    grows (larger budgets use the default)."""
    import tvm.s_tir.meta_schedule as ms  # pylint: disable=import-outside-toplevel

    if trials >= 64 * tasks:
        return "evolutionary"
    return ms.search_strategy.EvolutionarySearch(population_size=64, init_min_unmeasured=16, genetic_num_iters=2)


def cost_model():
    """MetaSchedule's XGBoost cost model when xgboost is installed, else random search over the space."""
    import importlib.util  # pylint: disable=import-outside-toplevel

    return "xgb" if importlib.util.find_spec("xgboost") is not None else "random"


def build_without_intrinsics(mod, target, _params):
    """MetaSchedule's default build function minus `import tvm.s_tir.tensor_intrin`: a candidate arrives
    already scheduled (tensorized blocks are inlined), so building it needs no intrinsic registry."""
    from tvm.driver import build as tvm_build  # pylint: disable=import-outside-toplevel
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock  # pylint: disable=import-outside-toplevel

    return tvm_build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod), target=target)


def prepare(mod, target):
    """`mod` lowered to fused TIR kernels the way TVM's static_shape_tuning pipeline does before tuning."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    with target:
        return tvm.transform.Sequential([
            relax.transform.DecomposeOpsForInference(),
            relax.transform.CanonicalizeBindings(),
            relax.get_pipeline("zero"),
        ])(mod)


def database_records(work_dir):
    """Records in the database at `work_dir` (0 when there is none yet)."""
    path = os.path.join(work_dir, "database_tuning_record.json")
    if not os.path.isfile(path):
        return 0
    with open(path) as f:
        return sum(1 for line in f if line.strip())


# Set by the worker's SIGINT handler (tvm_worker.main). While MEASURING is set (MetaSchedule is running, calling
# back into Python from C++) the handler raises nothing: a KeyboardInterrupt unwinding through TVM's frames
# crashed the worker (SIGSEGV); the builder and the measure callback see the flag and end the run instead.
INTERRUPTED = threading.Event()
MEASURING = threading.Event()

# Set by StopAt when a time budget's deadline stopped the tune (the exception MetaSchedule passes back up is
# then the planned end, not a failure).
DEADLINE_REACHED = threading.Event()

SECONDS_PER_TRIAL = 3.0  # measured on 2 cores (MobileNetV2, ResNet-18): sizes a time budget's search

LEDGER = "sorun_compile_tuning.json"  # in the database directory: what was tuned for which model and target


def model_key(mod, target):
    """A key for (prepared module, target): the module's structural hash and the target's text."""
    from tvm_ffi import structural_hash  # pylint: disable=import-outside-toplevel

    return "%016x %s" % (structural_hash(mod) & (2**64 - 1), target)


def _ledger(work_dir):
    path = os.path.join(work_dir, LEDGER)
    if not os.path.isfile(path):
        return {}
    try:
        with open(path) as f:
            value = json.load(f)
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}  # a damaged ledger only costs a retune


def _record(work_dir, key, trials, seconds):
    ledger = _ledger(work_dir)
    done = ledger.get(key, {"trials": 0, "seconds": 0.0})
    ledger[key] = {"trials": done["trials"] + trials, "seconds": round(done["seconds"] + seconds, 1)}
    tmp = os.path.join(work_dir, LEDGER + ".tmp")
    write_json(tmp, ledger)
    os.replace(tmp, os.path.join(work_dir, LEDGER))


def stop_at(deadline, measured):
    """A MetaSchedule measure callback, run after each measured batch (after TVM's default callbacks have
    written the batch to the database): counts the batch's built trials into `measured` (a one-element list) and
    ends the tune by raising once `deadline` (time.time(), or None) has passed or Ctrl-C was pressed, so a
    time budget overruns by at most one batch instead of one round, and an interrupt does not wait for it."""
    import tvm.s_tir.meta_schedule as ms  # pylint: disable=import-outside-toplevel
    from tvm.ir.utils import derived_object  # pylint: disable=import-outside-toplevel

    @derived_object
    class StopAt(ms.measure_callback.PyMeasureCallback):
        def apply(self, _scheduler, _task_id, _candidates, builder_results, _runner_results):
            measured[0] += sum(1 for b in builder_results if b.error_msg is None)  # built and measured
            if INTERRUPTED.is_set():
                raise RuntimeError("interrupted")  # an ordinary exception: it crosses TVM's C++ frames
            if deadline is not None and time.time() >= deadline:
                DEADLINE_REACHED.set()
                raise TimeoutError("the tuning time budget is spent")

    return StopAt()


def builder_until(deadline):
    """MetaSchedule's LocalBuilder (with build_without_intrinsics) that stops building once `deadline`
    (time.time(), or None) has passed or Ctrl-C was pressed: later candidates come back as build errors at
    once. MetaSchedule's first pass sends a batch of every kernel before it measures (and calls back for)
    any, which StopAt alone cannot cut short; skipped candidates are not measured, so nothing slow or
    wrong enters the database."""
    import tvm.s_tir.meta_schedule as ms  # pylint: disable=import-outside-toplevel
    from tvm.ir.utils import derived_object  # pylint: disable=import-outside-toplevel

    local = ms.builder.LocalBuilder(f_build=build_without_intrinsics, timeout_sec=120)

    @derived_object
    class UntilDeadline(ms.builder.PyBuilder):
        def build(self, build_inputs):
            if not INTERRUPTED.is_set() and (deadline is None or time.time() < deadline):
                return local.build(build_inputs)
            why = "not built: interrupted" if INTERRUPTED.is_set() else "not built: the tuning time budget is spent"
            return [ms.builder.BuilderResult(None, why) for _ in build_inputs]

    return UntilDeadline()


def tune(mod, target, work_dir, budget, log):
    """Tunes prepared `mod` for `target` within `budget` (parse_budget's pair), recording into `work_dir`.
    A budget this database already spent on the same module and target is not spent again (the ledger
    LEDGER counts trials and seconds per model). Returns a dict for the report: tasks, trials, seconds,
    records, reused."""
    import tvm.s_tir.meta_schedule as ms  # pylint: disable=import-outside-toplevel

    os.makedirs(work_dir, exist_ok=True)
    t0 = time.time()
    tasks = ms.relax_integration.extract_tasks(mod, target)
    key = model_key(mod, target)
    kind, amount = budget
    done = _ledger(work_dir).get(key, {"trials": 0, "seconds": 0.0})
    if not tasks or done[kind] >= amount:
        log("tune: %s already has %d trials (%.0f s) of tuning for this model and target: no tuning" %
            (work_dir, done["trials"], done["seconds"]))
        return {"tasks": len(tasks), "trials": 0, "seconds": time.time() - t0,
                "records": database_records(work_dir), "reused": True}
    # MetaSchedule's CPU schedule rules register the tensor intrinsics of TVMScript modules on first use: over a
    # minute on 2 cores, paid once per compile. It happens here, before the budget's clock starts.
    t_import = time.time()
    import tvm.s_tir.tensor_intrin  # noqa: F401 pylint: disable=import-outside-toplevel,unused-import

    log("tune: MetaSchedule's tensor intrinsics loaded in %.0f s (not counted in the budget)" %
        (time.time() - t_import))
    t0 = time.time()
    # One MetaSchedule run: a trial budget's remaining trials, or for a time budget as many as MetaSchedule
    # will take, ended by StopAt at the deadline (its start-up, design spaces of every kernel and worker
    # pools, is paid once, not per round). The search is sized by the trials expected (~3 s each here).
    deadline = t0 + amount - done["seconds"] if kind == "seconds" else None
    n = amount - done["trials"] if kind == "trials" else 1 << 30
    expected = n if kind == "trials" else max(1, int((deadline - t0) / SECONDS_PER_TRIAL))
    log("tune: %d kernels, %s (%s)" % (len(tasks), "%d trials" % n if kind == "trials" else
                                        "until %.0f s from now" % (deadline - t0), work_dir))
    DEADLINE_REACHED.clear()
    measured = [0]
    MEASURING.set()
    try:
        ms.relax_integration.tune_relax(
            mod, {}, target, work_dir, max_trials_global=n,
            num_trials_per_iter=min(64, max(4, expected // len(tasks))), builder=builder_until(deadline),
            runner=ms.runner.LocalRunner(timeout_sec=60),
            measure_callbacks=ms.measure_callback.MeasureCallback.create("default") + [stop_at(deadline, measured)],
            cost_model=cost_model(), strategy=search_strategy(expected, len(tasks)), seed=len(tasks) + done["trials"])
    except KeyboardInterrupt:
        INTERRUPTED.set()
    except CompileError:
        raise
    except Exception as e:  # TVM errors: one line, naming the step
        if not INTERRUPTED.is_set() and not DEADLINE_REACHED.is_set():
            raise CompileError("tune", "MetaSchedule failed: %s" % last_line(e)) from None
    finally:
        MEASURING.clear()
    # A trial budget that ran to its end counts as spent (MetaSchedule may measure a few more, finishing a
    # batch, or fewer, out of candidates), so the same budget again is reused; a time budget counts the
    # seconds from its clock's start, so the ledger sums to at least the budget.
    trials = measured[0] if INTERRUPTED.is_set() or kind == "seconds" else n
    _record(work_dir, key, trials, time.time() - t0)
    if INTERRUPTED.is_set():
        raise CompileError("tune", "interrupted after %d trials in %.0f s; the database at %s keeps what was "
                           "measured (the next compile with it resumes)" % (trials, time.time() - t0, work_dir))
    return {"tasks": len(tasks), "trials": trials, "seconds": time.time() - t0,
            "records": database_records(work_dir), "reused": False}


def apply_database(mod, target, work_dir):
    """Prepared `mod` with the database's best schedules applied (kernels without one keep TVM's default)."""
    import tvm  # pylint: disable=import-outside-toplevel
    from tvm import relax  # pylint: disable=import-outside-toplevel

    if not os.path.isdir(work_dir) or database_records(work_dir) == 0:
        raise CompileError("tune", "--database %s: no tuning records there (database_tuning_record.json)" % work_dir)
    with target, tvm.transform.PassContext(opt_level=3):
        return relax.transform.MetaScheduleApplyDatabase(work_dir)(mod)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
