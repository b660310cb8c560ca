// sorun: the public C++ API. One include, one Bazel target (//api:sorun, or //api:sorun_cpu without
// the OpenCL/CUDA backends). This header and the two base headers it includes are the whole surface:
// no internal type appears here.
//
//   auto model = sorun::Model::Load("model.so");          // graph + weights + kernels, one file
//   if (!model.ok()) { std::cerr << model.status().ToString() << "\n"; return 1; }
//   sorun::ExecutorOptions options;
//   options.num_threads = 2;                               // this executor's own pool
//   auto exec = model->NewExecutor(options);
//   auto outputs = exec->Run({{"data", &input}});          // input: any DLTensor; check outputs.ok()
//   // or step by step, each a Status to check: exec->SetInput("data", input), exec->Run(),
//   // then auto y = exec->GetOutput(0). README.md's compiled version of this is a whole program.
//
// Errors are sorun::Status values (base/status.h); nothing throws or aborts. Threading
// (docs/threading.md): a Model is immutable and may be shared by any number of threads; each
// Executor is used by one thread at a time (an overlapping call fails with FailedPrecondition);
// executors of one model share its weights and run concurrently.
//
// Environment variables (SORUN_NUM_THREADS, SORUN_SPIN_US, SORUN_VERIFY_CHECKSUM) are defaults only:
// an option set explicitly here always wins.
#ifndef SORUN_API_SORUN_H_
#define SORUN_API_SORUN_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/executor_types.h"
#include "base/load_hooks.h"
#include "base/status.h"

namespace sorun {

// Registers every backend and module loader linked into this program and validates the SORUN_*
// environment variables. Idempotent and thread-safe; Model::Load calls it.
Status Initialize();

// The runtime's version, "MAJOR.MINOR.PATCH" (SORUN_VERSION of //:version.bzl; `sorun --version` prints it).
const char* Version();

// For hosts that load sorun inside a shared object opened with RTLD_LOCAL (a Python extension, a
// Triton backend, ctypes): kernel libraries built as system-lib or for TVM's `c` target call the TVM
// C ABI functions (TVMBackendRegisterSystemLibSymbol, TVMBackendAllocWorkspace, ...) BY NAME, which
// the dynamic linker can only resolve from the global scope. This re-opens the shared object that
// contains sorun with RTLD_GLOBAL | RTLD_NOLOAD, so its exported symbols become global: keep that
// list to the TVM C ABI and the host's own entry points with a version script (the Python extension
// and the Triton backend do; runtime/c_api_exports.bzl). Nothing to do in an executable. Idempotent.
// FailedPrecondition when another TVM runtime already defines the ABI globally (TVM's libtvm_ffi after
// `import tvm`): its definitions would take the calls of sorun's kernels. The converse cannot be checked:
// a TVM runtime loaded after this call binds its own calls to sorun's ABI, so keep TVM out of a process
// that loads sorun models (the Python package calls this at the first sorun.load, not at import).
Status MakeTvmAbiGlobal();

// Threads of the process-wide pool that executors created with num_threads == 0 share (counting the
// thread that calls Run): SORUN_NUM_THREADS, else one per hardware thread. Starts the pool.
int ProcessPoolThreads();

// "cpu", "cpu:0", "opencl", "opencl:1", "cuda:0" ("gpu" means cuda). InvalidArgument otherwise, naming
// the accepted forms. The one parser of device strings (CLI, Python, Triton backend).
StatusOr<DLDevice> ParseDevice(std::string_view text);
// "cpu:0", "opencl:1", "cuda:0".
std::string DeviceName(DLDevice device);
// A device type alone: "cpu", "opencl", "cuda" (the same function as the runtime's).
const char* DeviceTypeName(int device_type);
// "float32", "int8", "bool"; "float32x4" for vector lanes.
std::string DataTypeName(DLDataType dtype);
// The inverse of DataTypeName; InvalidArgument for anything else.
StatusOr<DLDataType> ParseDataType(std::string_view text);

// How a model file is loaded.
struct RuntimeOptions {
  // Verify the blob checksum record at load. Unset: SORUN_VERIFY_CHECKSUM (1/0), else off.
  std::optional<bool> verify_checksum;
  // What Load does to the blob's pages: kNone (fault in on first use), kWillNeed (start reading them
  // into the page cache in the background; the default), kPopulate (map them all before returning).
  enum class Prefetch { kNone, kWillNeed, kPopulate };
  Prefetch prefetch = Prefetch::kWillNeed;
  // Decryption on the way in (base/load_hooks.h): called with the stored bytes (the file's, or the
  // buffer's), it writes the library's plaintext into a sealed anonymous memory file that is then
  // loaded; the plaintext never reaches a file system. Empty: the bytes are the library.
  DecryptHook decrypt;
  // Called with the library's exact bytes before dlopen (base/load_hooks.h): a non-OK status refuses the
  // model before any of its code (constructors included) runs. When set, a file is first copied into a
  // sealed memory file, so the bytes checked are the bytes mapped. security::Ed25519Verifier
  // (//security:model_signature) makes one.
  LibraryVerifier verify_library;
};

// How an executor runs.
struct ExecutorOptions {
  // Devices; the first is the default device. Empty: {cpu:0}.
  std::vector<DLDevice> devices;
  // CPU threads for this executor's parallel kernels, counting the thread that calls Run.
  // 0: the process-wide pool (SORUN_NUM_THREADS, else one per hardware thread), shared by every
  // executor that leaves this 0. > 0: a pool owned by this executor (workers start at creation).
  int num_threads = 0;
  // CPU ids the executor's pool workers are pinned to (worker i -> cpu_affinity[(i - 1) % size]; the
  // thread calling Run is not moved). Empty: not pinned. Non-empty gives the executor its own pool.
  std::vector<int> cpu_affinity;
  // Microseconds an idle worker spins before it sleeps. Unset: SORUN_SPIN_US, else the built-in
  // default. Set: the executor gets its own pool.
  std::optional<int64_t> spin_us;
  // Touch every page the first run would fault in (weights read in place, activation pools) before
  // NewExecutor returns (Executor::Warmup).
  bool warmup = false;
  // CUDA graphs: Run records the kernels of a run on the executor's CUDA stream once and replays them
  // with one launch (the first run with given bindings runs as usual, the second is recorded; a new
  // input/output address or shape records again). A run that cannot be recorded (a CPU kernel, host
  // memory read by the host, a device synchronization or allocation inside the run, more than one
  // device) runs kernel by kernel, and GraphReport() says why. The executor's own stream is then
  // independent of stream 0: read outputs after Synchronize / CopyOutputTo.
  bool cuda_graph = false;
};

// An n-d array: a DLTensor plus whatever keeps its memory alive (reference counted: copies share
// the data). Created by Empty / FromDLPack or returned by an Executor. Safe to pass between threads;
// writing the same data concurrently is the caller's business.
class NDArray {
 public:
  NDArray();  // undefined (defined() is false)
  ~NDArray();
  NDArray(const NDArray&);
  NDArray& operator=(const NDArray&);
  NDArray(NDArray&&) noexcept;
  NDArray& operator=(NDArray&&) noexcept;

  // A new compact, 64-byte aligned array (contents uninitialised).
  static StatusOr<NDArray> Empty(const std::vector<int64_t>& shape, DLDataType dtype,
                                 DLDevice device = DLDevice{kDLCPU, 0});
  // Takes ownership of a DLPack tensor (its deleter runs when the last copy goes). Zero-copy.
  static StatusOr<NDArray> FromDLPack(DLManagedTensor* managed);

  bool defined() const;
  // The DLTensor (valid while this NDArray or a copy lives).
  const DLTensor& dl() const;
  void* data() const;  // dl().data + dl().byte_offset
  const std::vector<int64_t>& shape() const;
  DLDataType dtype() const;
  DLDevice device() const;
  int64_t num_elements() const;
  uint64_t nbytes() const;
  // "float32[1, 10] on cpu:0".
  std::string Describe() const;
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }

  // A DLManagedTensor sharing this array's data; the consumer calls its deleter. Zero-copy.
  DLManagedTensor* ToDLPack() const;
  // A compact copy on `device`.
  StatusOr<NDArray> CopyTo(DLDevice device) const;
  // Copies `src` (same byte size, any device) into this array.
  Status CopyFrom(const DLTensor& src) const;

 private:
  friend class Executor;
  struct Impl;
  explicit NDArray(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// One executor of a model: its own activations and bindings over the model's shared weights.
// Created by Model::NewExecutor; move-only. One thread at a time (see the top of this file), except
// the accessors marked "any thread": they may be read while another thread runs the executor.
// The same contract for every model, whichever executor kind runs it (graph executor or Relax VM).
class Executor {
 public:
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  ~Executor();

  // Any thread. Every input (parameters bound from the model's weights have is_param set), and the
  // model's static description of its outputs: a dimension known only at run time is -1 (a Relax
  // model's dynamic dimension), and a model whose bytecode tells its outputs only by running lists
  // none. A run's actual shapes are those of the arrays GetOutput / Run return.
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // Any thread. Outputs of the last completed run; before the first run, outputs().size().
  int num_outputs() const;
  const std::vector<DLDevice>& devices() const;
  // Any thread. Threads of the pool this executor's parallel kernels use (its own, or the process pool).
  int num_threads() const;
  // Any thread. What this executor offers beyond the common calls (SetOutputZeroCopy, LoadParams,
  // ShareParams); a call it lacks fails with Unimplemented saying why.
  ExecutorCapabilities capabilities() const;
  // Any thread. Index of an input / output by name; NotFound listing the names. Outputs are also
  // found as "<name>:0" and, for a model that lists none, as "output_<k>".
  StatusOr<int> InputIndex(std::string_view name) const;
  StatusOr<int> OutputIndex(std::string_view name) const;

  // Copies `value` (same shape and dtype, any device, any strides-free layout) into an input.
  Status SetInput(int index, const DLTensor& value);
  Status SetInput(std::string_view name, const DLTensor& value);
  // Makes the kernels read the input directly from `value` (same shape, dtype and device; 64-byte
  // aligned on the CPU); `value` must stay alive and unchanged in shape while bound.
  Status SetInputZeroCopy(int index, const DLTensor& value);
  Status SetInputZeroCopy(std::string_view name, const DLTensor& value);
  // capabilities().output_zero_copy: makes the kernels write the output directly into `value` (same
  // checks).
  Status SetOutputZeroCopy(int index, const DLTensor& value);

  // Runs the model once with the inputs set so far.
  Status Run();
  // Convenience: sets `inputs` (name -> tensor), runs, and returns every output as a new host (CPU)
  // array that later runs do not change.
  StatusOr<std::vector<NDArray>> Run(const std::vector<std::pair<std::string, const DLTensor*>>& inputs);

  // The executor's own output / input array (no copy). Its memory stays valid while the NDArray
  // lives; its values are those of the last run (the next Run overwrites them).
  StatusOr<NDArray> GetOutput(int index) const;
  StatusOr<NDArray> GetInput(int index) const;
  // Copies output `index` into `out` (same shape and dtype, any device).
  Status CopyOutputTo(int index, const DLTensor& out) const;
  // Run queues device work and may return before it finishes: waits until the work this executor
  // queued has finished (the CPU is always idle after Run). CopyOutputTo and Run(inputs) wait
  // themselves; read GetOutput's array on the host after Synchronize.
  Status Synchronize();
  // The stream this executor queues the work of `device` on: its own (a CUDA stream per executor, so
  // executors of one GPU overlap; ordered with stream 0) or the one given to SetStream; null where the device
  // has no streams (OpenCL). InvalidArgument for a device the executor does not use (or the CPU).
  StatusOr<void*> GetStream(DLDevice device) const;
  // Queues the executor's work on `device` on `stream` (a CUstream of that device for CUDA) from now
  // on: the host's stream (Triton's instance stream, torch.cuda.current_stream().cuda_stream), which
  // the host keeps alive while the executor uses it; nullptr goes back to the executor's own.
  // Work already queued on the previous stream is waited for first.
  Status SetStream(DLDevice device, void* stream);

  // See ExecutorOptions::warmup.
  Status Warmup();
  // Per-kernel times: one entry per kernel call site (a graph's operator, a Relax instruction), each
  // timed over `repeat` runs of it.
  StatusOr<std::vector<NodeProfile>> Profile(int repeat);
  // Runs the model once and returns every kernel call on a timeline (device work waited for after each
  // call, so the times are the kernels' own): `sorun bench --trace` writes it as a Chrome trace.
  StatusOr<std::vector<KernelEvent>> Trace();
  // Any thread. Bytes per device: weights (shared), activations (this executor), kernel workspace
  // (measured).
  std::vector<DeviceMemory> Memory() const;
  // How Run used CUDA graphs (ExecutorOptions::cuda_graph): captures, replays, uncaptured runs and, when
  // the current bindings are not replayed, why.
  StatusOr<DeviceGraphReport> GraphReport() const;

  // capabilities().params_files: TVM's load_params (params-file bytes; each tensor is copied into its
  // input) and share_params (inputs named in `params_bytes` alias `other`'s tensors; no copy).
  Status LoadParams(std::string_view params_bytes);
  Status ShareParams(const Executor& other, std::string_view params_bytes);

 private:
  friend class Model;
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A loaded model: the mapped library, its module tree and ONE read-only copy of the weights.
// Copyable (copies share the model); immutable and thread-safe: executors may be created from many
// threads at once.
class Model {
 public:
  // One file: a packed model library (.so; .tar where //api:sorun is linked).
  static StatusOr<Model> Load(const std::string& path, const RuntimeOptions& options = {});
  // The same model from bytes in memory (a download, a store, a decrypted buffer): copied into an
  // anonymous sealed memfd and loaded from there (dlopen of /proc/self/fd/N). Nothing is written to any
  // file system; weights are used in place from the memfd's mapping; the caller may free `bytes` when
  // this returns. Every check of a file applies unchanged, its messages naming `name` instead of a
  // path (byte offsets are the same). Unimplemented where the kernel has no memfd_create.
  static StatusOr<Model> LoadFromMemory(std::string_view bytes, const RuntimeOptions& options = {},
                                        const std::string& name = "<memory>");
  // The three-file deployment: graph JSON + kernel library + params file (optional: empty path). The
  // params file is mapped and its tensors used in place when 64-byte aligned (as sorun writes them).
  static StatusOr<Model> LoadFromFiles(const std::string& graph_json_path, const std::string& library_path,
                                       const std::string& params_path, const RuntimeOptions& options = {});
  // A model linked into this program (TVM's `system-lib` build; docs/embedded.md "System-lib models"):
  // its kernels and `__tvm_dev_mblob` were registered at startup by global constructors calling
  // TVMBackendRegisterSystemLibSymbol, each name prefixed with `prefix` (TVM's system_lib_prefix; ""
  // when the model was built without one). The graph executor calls the registered kernels by name.
  // NotFound when nothing is registered under `prefix`; DataLoss naming `<prefix>__tvm_dev_mblob` and
  // the byte for a malformed blob; FailedPrecondition when only kernels (no blob) are registered. path()
  // is "system-lib" or "system-lib:<prefix>". Each call builds a new Model; the weights are used in place.
  static StatusOr<Model> LoadSystemLib(const std::string& prefix = "");

  // Inputs (parameters flagged is_param) and outputs, read from the model without running (the same
  // as Executor::inputs() / outputs()).
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // The path given to Load (the library path for LoadFromFiles; the name given to LoadFromMemory).
  const std::string& path() const;
  // Which executor kind runs the model: "graph executor" or "Relax VM".
  const char* executor_kind() const;
  // What the model's executors offer beyond the common calls.
  ExecutorCapabilities capabilities() const;
  // The device types the model's kernels need, read from its module tree at load: kDLCUDA when they are
  // in a CUDA module, kDLOpenCL for an OpenCL module, {kDLCPU} when it has no device module (the host
  // library's own kernels). NewExecutor needs a device of each listed type and refuses any other non-CPU
  // device (DeviceTypeName names them: "cuda").
  std::vector<DLDeviceType> device_types_needed() const;

  // A new executor; the weights are shared, not copied. Its devices are checked against
  // device_types_needed() first: InvalidArgument ("model.so: its kernels are in a CUDA module: it needs a
  // cuda device, the executor was given cpu:0"; "model.so: it has kernels for cpu only (no OpenCL
  // module): it cannot run on opencl:0"), before anything is allocated.
  StatusOr<Executor> NewExecutor(const ExecutorOptions& options = {}) const;

  Model(const Model&);
  Model& operator=(const Model&);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

 private:
  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace sorun

#endif  // SORUN_API_SORUN_H_
