// The Relax fuzz bodies (fuzz_targets.h):
//   FuzzRelax    the container and VM executable readers of relax/ (nothing runs);
//   FuzzRelaxVm  the VM itself: a fuzzed executable is resolved against the kernel library of a real TVM
//                export loaded once per process, then RUN (the executable is data: every error must be a
//                Status; kernels are the export's real, trusted code).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/model_loading.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_targets.h"
#include "relax/library_blob.h"
#include "relax/relax_module.h"
#include "relax/vm_disassembler.h"
#include "relax/vm_executable.h"
#include "relax/vm_executor.h"
#include "relax/vm_program.h"
#include "runtime/data_type.h"

namespace sorun {
namespace fuzz {
namespace {

// Parses one executable payload and, when valid, runs everything built on the model.
void FuzzExecutablePayload(const uint8_t* data, size_t size, relax::ConstantTagDialect dialect) {
  auto exec = relax::ParseVmExecutable(data, size, dialect);
  if (!exec.ok()) {
    Note("relax", exec.status());
    return;
  }
  FUZZ_CHECK(exec->instructions.size() == exec->instr_offset.size(), "one decoded instruction per offset");
  FUZZ_CHECK(relax::ValidateVmExecutable(*exec).ok(), "a parsed executable validates again");
  for (const relax::VmConstant& c : exec->constants) {
    if (c.kind == relax::VmConstantKind::kTensor && c.data_bytes != 0) {
      FUZZ_CHECK(c.data >= data && c.data + c.data_bytes <= data + size, "tensor data inside the payload");
    }
  }
  auto is_kernel = [](const std::string& name) { return name.size() % 2 == 0; };
  const auto callees = relax::ClassifyFunctions(*exec, is_kernel);
  FUZZ_CHECK(callees.size() == exec->functions.size(), "one class per function");
  Note("relax", relax::CheckCalleesSupported(*exec, callees));
  const std::string text = relax::Disassemble(*exec, is_kernel);
  FUZZ_CHECK(!text.empty(), "disassembly");
  auto inputs = relax::DescribeInputs(*exec);
  if (inputs.ok())
    FUZZ_CHECK(inputs->size() == exec->functions[exec->FindFunction("main")].param_names.size(), "inputs");
}

// ---- FuzzRelaxVm ----

// The real exports whose kernel libraries the fuzzed executables run against (byte 0: bits 0-1, and bit
// 4 for the second four; FixtureIndex).
struct VmFixture {
  const char* path;  // workspace path, a runfile of the fuzz binaries
  relax::ConstantTagDialect dialect;
  relax::KernelAbi abi;
};
constexpr VmFixture kVmFixtures[8] = {
    {"testdata/relax/mlp.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/cnn.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/dyn_batch.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/legacy_mlp.so", relax::ConstantTagDialect::kLegacyEnum, relax::KernelAbi::kLegacyPacked},
    // If/Goto and bool; an R.Prim parameter handed to a kernel; kernels calling tvm.contrib.sort.*; a
    // kernel using parallel launch and a workspace.
    {"testdata/relax/bool_if.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/prim_scale.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/sort_topk.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
    {"testdata/relax/tir_par.so", relax::ConstantTagDialect::kFfiTypeIndex, relax::KernelAbi::kFfi},
};

// Which kVmFixtures entry selector byte `b` names: bits 0-1, plus 4 when bit 4 is set.
size_t FixtureIndex(uint8_t b) { return static_cast<size_t>((b & 3) | ((b >> 2) & 4)); }

// The loaded fixtures, once per process (never unloaded: the models and their libraries stay loaded until
// exit). Per fixture: the kernel library of its root.
struct LoadedFixtures {
  std::vector<Module> roots;
  std::vector<Module> kernel_libraries;
};

const std::vector<Module>& KernelLibraries() {
  static const LoadedFixtures* loaded = [] {
    auto* out = new LoadedFixtures();
    for (const VmFixture& f : kVmFixtures) {
      const std::string path = FindRunfile(f.path);
      auto root = Load(path);
      FUZZ_CHECK(root.ok(), root.status().ToString());
      relax::RelaxExecutableModule* vm = relax::AsRelaxExecutable(*root);
      FUZZ_CHECK(vm != nullptr, path + " is a Relax export");
      auto program = vm->Program(path);
      FUZZ_CHECK(program.ok(), program.status().ToString());
      FUZZ_CHECK((*program)->kernel_library().defined(), path + " has a kernel library");
      FUZZ_CHECK((*program)->abi() == f.abi, path + ": kernel ABI");
      out->kernel_libraries.push_back((*program)->kernel_library());
      out->roots.push_back(std::move(*root));
    }
    return out;
  }();
  return loaded->kernel_libraries;
}

// Owns the copy of one input that a program's executable borrows from (its tensor constants).
class InputBytes final : public Object {
 public:
  InputBytes(const uint8_t* data, size_t size) : bytes_(data, data + size) {}
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

bool Small(int64_t v) { return v >= -int64_t{kMaxExecutorBytes} && v <= int64_t{kMaxExecutorBytes}; }

// The harness's memory bound (as SmallEnoughToRun for graphs): a program is run only when every number
// that can become a size (shape constant dims, int constants, immediate arguments) is within
// kMaxExecutorBytes, so no single allocation the bytecode asks for exceeds 1 MiB. Larger requests are
// legitimate bytecode (TVM would try them), not a bug, and would only hit libFuzzer's malloc limit.
bool SmallEnoughToRun(const relax::VmExecutable& exec) {
  for (const relax::VmConstant& c : exec.constants) {
    if (c.kind == relax::VmConstantKind::kInt && !Small(c.int_value)) return false;
    if (c.kind == relax::VmConstantKind::kShape) {
      for (int64_t d : c.shape) {
        if (!Small(d)) return false;
      }
    }
  }
  for (const relax::VmInstruction& in : exec.instructions) {
    for (const relax::VmArg& a : in.args) {
      if (a.kind == relax::VmArgKind::kImmediate && !Small(a.value)) return false;
    }
  }
  return true;
}

// Binds every input the program describes with a known dtype: zeros, dynamic dims set to `dynamic`.
void BindInputs(relax::VmExecutor& executor, int64_t dynamic) {
  const relax::VmProgram& program = executor.program();
  for (int i = 0; i < executor.num_inputs(); ++i) {
    if (!program.input_dtype_known(i)) continue;
    std::vector<int64_t> shape = program.inputs()[static_cast<size_t>(i)].shape;
    for (int64_t& d : shape) {
      if (d < 0) d = dynamic;
    }
    const DLDataType dtype = program.inputs()[static_cast<size_t>(i)].dtype;
    auto bytes = ShapeByteSize(shape.data(), static_cast<int>(shape.size()), dtype);
    if (!bytes.ok() || *bytes > kMaxExecutorBytes) continue;
    auto t = Tensor::Empty(shape, dtype, DLDevice{kDLCPU, 0});
    if (!t.ok()) {
      Note("relax_vm", t.status());
      continue;
    }
    std::memset(t->data(), 0, static_cast<size_t>(*bytes));
    Note("relax_vm", executor.SetInput(i, *t->dl()));
  }
}

// One run; on success every output is read end to end (ASan sees a dangling or short view).
void RunOnce(relax::VmExecutor& executor) {
  Status s = executor.Run();
  Note("relax_vm", s);
  if (!s.ok()) return;
  // The static description (when the bytecode gives one) holds for every run: count, rank, static dims.
  const std::vector<TensorInfo>& described = executor.outputs();
  FUZZ_CHECK(described.empty() || static_cast<int>(described.size()) == executor.num_outputs(),
             "one static description per output");
  volatile uint8_t sink = 0;
  for (int k = 0; k < executor.num_outputs(); ++k) {
    auto out = executor.GetOutput(k);
    FUZZ_CHECK(out.ok(), out.status().ToString());
    if (!described.empty()) {
      const std::vector<int64_t>& dims = described[static_cast<size_t>(k)].shape;
      FUZZ_CHECK(out->shape().size() == dims.size(), "output rank");
      for (size_t d = 0; d < dims.size(); ++d) FUZZ_CHECK(dims[d] < 0 || dims[d] == out->shape()[d], "output dim");
    }
    const uint64_t n = out->nbytes();
    if (n == 0 || out->device().device_type != kDLCPU) continue;
    const uint8_t* p = static_cast<const uint8_t*>(out->data()) + out->dl()->byte_offset;
    sink = sink + p[0] + p[n - 1];
  }
  (void)sink;
  FUZZ_CHECK(executor.GetOutput(executor.num_outputs()).status().code() == StatusCode::kOutOfRange,
             "output index past the end");
}

}  // namespace

int FuzzRelaxVm(const uint8_t* data, size_t size) {
  Init();
  if (size < 1) return 0;
  // Byte 0: bits 0-1 and 4 the fixture whose kernel library (and constant dialect) is used (FixtureIndex),
  // bits 2-3 the value (1 - 4) of every dynamic input dimension. The rest: a VM executable payload.
  const VmFixture& fixture = kVmFixtures[FixtureIndex(data[0])];
  const Module& kernels = KernelLibraries()[FixtureIndex(data[0])];
  const int64_t dynamic = 1 + ((data[0] >> 2) & 3);
  auto bytes = MakeObject<InputBytes>(data + 1, size - 1);
  auto exec = relax::ParseVmExecutable(bytes->data(), bytes->size(), fixture.dialect, "fuzz");
  if (!exec.ok()) {
    Note("relax_vm", exec.status());
    return 0;
  }
  const bool small = SmallEnoughToRun(*exec);
  auto program = relax::VmProgram::Create(std::make_shared<const relax::VmExecutable>(std::move(*exec)), bytes, kernels,
                                          fixture.abi, "fuzz");
  if (!program.ok()) {
    Note("relax_vm", program.status());
    return 0;
  }
  const relax::VmProgram& p = **program;
  FUZZ_CHECK(p.callees().size() == p.exec().functions.size(), "one callee per function table entry");
  FUZZ_CHECK(p.constants().size() == p.exec().constants.size(), "one value per constant");
  FUZZ_CHECK(
      static_cast<int64_t>(p.inputs().size()) == p.exec().functions[static_cast<size_t>(p.main_function())].num_args,
      "one input per parameter of main");
  if (!small) return 0;
  auto executor = relax::VmExecutor::Create(*program, {DLDevice{kDLCPU, 0}});
  FUZZ_CHECK(executor.ok(), executor.status().ToString());
  BindInputs(**executor, dynamic);
  RunOnce(**executor);
  RunOnce(**executor);  // the second run reuses what the first made
  (void)(*executor)->Memory();
  return 0;
}

int FuzzRelax(const uint8_t* data, size_t size) {
  Init();
  if (size < 1) return 0;
  // Byte 0 selects the input: 0/1/2 a blob symbol of each generation, 3 a bare executable payload
  // (bit 2: enum constant tags, else tvm-ffi tags).
  const uint8_t selector = data[0];
  ++data;
  --size;
  const int mode = selector & 3;
  if (mode == 3) {
    FuzzExecutablePayload(
        data, size, (selector & 4) ? relax::ConstantTagDialect::kLegacyEnum : relax::ConstantTagDialect::kFfiTypeIndex);
    return 0;
  }
  static const char* const kSymbols[] = {keys::kSymbolDevMblob, keys::kSymbolFfiLibraryBin,
                                         keys::kSymbolFfiLibraryBinV22};
  auto blob = relax::ParseLibraryBlob(data, size, kSymbols[mode]);
  if (!blob.ok()) {
    Note("relax", blob.status());
    return 0;
  }
  FUZZ_CHECK(8 + blob->payload_size <= size, "payload inside the symbol");
  for (const relax::LibraryBlobModule& m : blob->modules) {
    if (m.payload == nullptr) continue;
    FUZZ_CHECK(m.payload >= data && m.payload + m.payload_size <= data + size, "module payload inside the symbol");
    if (relax::IsRelaxExecutableTypeKey(m.type_key)) {
      FuzzExecutablePayload(m.payload, static_cast<size_t>(m.payload_size),
                            relax::UsesFfiConstantTags(blob->generation) ? relax::ConstantTagDialect::kFfiTypeIndex
                                                                         : relax::ConstantTagDialect::kLegacyEnum);
    }
  }
  Note("relax", relax::RootExecutable(*blob).status());
  return 0;
}

}  // namespace fuzz
}  // namespace sorun
