// The "opencl" module (TVM's OpenCLModuleNode): OpenCL C kernels from a DeviceModulePayload, built
// lazily per device and launched through PackedFuncs with TVM's calling convention.
//
// Source layout (fmt "cl"): when the source has lines "// Function: <name>" (TVM v0.9+), each starts
// the source piece of one kernel (up to the next such line) and every piece is built as its own
// program; the number of pieces must equal the number of kernels in the function map. Text before the
// first delimiter, when not blank, is prepended to every piece. Without delimiters the whole source
// is one program holding every kernel. FPGA binaries (xclbin, awsxclbin, aocx) are refused at load.
//
// A kernel's PackedFunc takes the kernel parameters (buffer handles: the cl_mem, type code 3; or a
// DLTensor/NDArray on an OpenCL device with byte_offset 0; scalars as TVM passes them: ints as i64,
// floats as f64, narrowed to the declared dtype), then one integer per launch tag
// (blockIdx.* / threadIdx.*). It enqueues the kernel with local = threadIdx extents and global =
// blockIdx * threadIdx extents on the current device's queue (OpenclDevices::CurrentDevice(), set by
// __tvm_set_device) and returns without waiting; reads through the DeviceApi are ordered after it.
//
// Programs are built on first use per device (or by BuildPrograms) and cached in the module; program
// binaries go through a ProgramCache on disk. cl_kernel objects are created per device and per
// thread (clSetKernelArg is not thread-safe on a shared kernel), kept in a thread-local table and
// released when the thread exits or, after the module dies, on that thread's next launch.
//
// Thread-safety: a module and its functions may be used from many threads at once. Ownership: the
// module owns its programs; functions returned by GetFunction keep the module alive.
#ifndef SORUN_BACKENDS_OPENCL_OPENCL_MODULE_H_
#define SORUN_BACKENDS_OPENCL_OPENCL_MODULE_H_

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/device_module_payload.h"
#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/program_cache.h"
#include "format/binary_reader.h"
#include "runtime/module.h"

namespace sorun {

// How an "opencl" module builds its programs and where it runs them. Plain data.
struct OpenclModuleOptions {
  // Program-binary cache; null = ProgramCache::Default() unless disable_program_cache.
  std::shared_ptr<ProgramCache> program_cache;
  bool disable_program_cache = false;
  // Options for clBuildProgram (part of the cache key).
  std::string build_options;
  // Devices to build for and launch on (borrowed, must outlive the module); null = OpenclDevices::Global().
  OpenclDevices* devices = nullptr;
};

// One program's source: the kernel it holds ("" = the whole, undivided source) and its text.
struct OpenclSourcePiece {
  std::string kernel;
  std::string source;
};

// Splits OpenCL source on "// Function: <name>" lines (see the file comment). DataLoss for an empty
// kernel name or a name that appears twice.
StatusOr<std::vector<OpenclSourcePiece>> SplitOpenclSource(std::string_view source);

// What an "opencl" payload builds and launches, planned from the payload alone (no OpenCL platform).
struct OpenclPayloadPlan {
  struct Kernel {
    LaunchConfig config;
    std::vector<size_t> arg_bytes;  // bytes of each argument as the kernel receives it
    size_t program = 0;             // index into `pieces`
  };
  std::vector<OpenclSourcePiece> pieces;  // one program each; one undivided piece when not split
  bool split = false;                     // the source is split per kernel ("// Function:" lines)
  std::vector<Kernel> kernels;            // in payload.functions order
};

// The one check of an "opencl" payload, run by OpenclModuleNode::Create when a model loads and by
// `sorun pack` before it writes one: fmt 'cl' (FPGA binaries are Unimplemented), a non-blank source,
// no kernel listed twice, a launchable FunctionInfo and argument types for every kernel, and, when
// the source is split, exactly one '// Function:' piece per kernel. DataLoss "opencl module: ..."
// otherwise. Pure function of the payload.
StatusOr<OpenclPayloadPlan> PlanOpenclPayload(const DeviceModulePayload& payload);

// The module itself (see the file comment). Created only through Create(); owns its payload and
// programs; thread-safe.
class OpenclModuleNode final : public ModuleNode {
 public:
  // Validates the payload (fmt, source pieces vs function map, argument types, launch tags) and
  // learns the device count; builds nothing.
  static StatusOr<ObjectPtr<OpenclModuleNode>> Create(DeviceModulePayload payload, OpenclModuleOptions options);
  ~OpenclModuleNode() override;

  const char* type_key() const override;
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override;
  int property_mask() const override { return kModuleBinarySerializable | kModuleRunnable; }
  // Its kernels check their own arguments, so a graph node may name them (runtime/module.h, "Kernels").
  bool provides_kernels() const override { return true; }
  // Writes the payload back unchanged.
  Status SaveToBinary(BinaryWriter* writer) const override;
  std::vector<std::string> ListFunctionNames() const override;

  // Builds every program for `device_id` now instead of on first launch.
  Status BuildPrograms(int device_id);

  const DeviceModulePayload& payload() const { return payload_; }
  // Number of separately built programs (source pieces).
  size_t num_programs() const { return programs_.size(); }
  // The program cache in use, or null when caching is off.
  ProgramCache* program_cache() const { return cache_.get(); }

 private:
  struct Kernel {
    std::string name;
    const FunctionInfo* info = nullptr;  // points into payload_
    LaunchConfig config;
    std::vector<size_t> arg_bytes;
    size_t program = 0;  // index into programs_
  };
  struct Program {
    std::string source;
    std::string label;  // "the program of kernel 'x'" or "the whole-source program (n kernels)"
  };
  struct ProgramSlot {
    std::mutex mutex;
    cl_program program = nullptr;
  };

  OpenclModuleNode() = default;
  Status LaunchKernel(size_t index, PackedArgs args);
  // Unavailable unless `device_id` is one of the module's devices.
  Status CheckDevice(int device_id) const;
  StatusOr<cl_kernel> GetKernel(size_t index, int device_id);
  StatusOr<cl_program> GetProgram(size_t program, int device_id);
  StatusOr<cl_program> BuildProgram(const Program& program, int device_id);

  DeviceModulePayload payload_;
  std::vector<Kernel> kernels_;  // in payload_.functions order
  std::vector<Program> programs_;
  std::string build_options_;
  std::shared_ptr<ProgramCache> cache_;
  OpenclDevices* devices_ = nullptr;
  int device_count_ = 0;
  std::vector<std::unique_ptr<ProgramSlot>> slots_;  // device_id * programs_.size() + program
  uint64_t id_ = 0;                                  // unique per module, never reused
  std::shared_ptr<const int> alive_;                 // expires when the module dies
};

// CreateOpenclModule(payload) = OpenclModuleNode::Create with default options, as a Module.
StatusOr<Module> CreateOpenclModule(DeviceModulePayload payload);
StatusOr<Module> CreateOpenclModule(DeviceModulePayload payload, OpenclModuleOptions options);
// The loader: reads an "opencl" payload at `reader` in `grammar` and creates the module. Registered as
// the blob loader "runtime.module.loadbinary_opencl" (kDetect: the legacy containers of TVM <= 0.20
// and TVM 0.21's) and as "ffi.Module.load_from_bytes.opencl" (kFfi, TVM 0.22+; RegisterFfiBytesLoader).
StatusOr<Module> LoadOpenclModuleFromBinary(BinaryReader& reader, PayloadGrammar grammar = PayloadGrammar::kDetect);

}  // namespace sorun

#endif  // SORUN_BACKENDS_OPENCL_OPENCL_MODULE_H_
