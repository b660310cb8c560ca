// The Relax VM end to end on real TVM exports (testdata/relax: TVM 0.27 tvm-ffi exports and a TVM
// 0.16 legacy one, with TVM's own outputs): sorun::Model::Load -> NewExecutor -> SetInput/Run/GetOutput
// must give TVM's outputs bit for bit; the program places constants as documented; repeated runs
// allocate nothing new; bad inputs and concurrent misuse are refused with messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "api/model_loading.h"
#include "api/sorun.h"
#include "packer/relax_pack.h"
#include "relax/relax_module.h"
#include "relax/vm_executor.h"
#include "tests/relax/relax_fixtures.h"
#include "tests/util/host_build.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

// Heap allocations of this test binary (every operator new), to show that a static model's steady
// state allocates nothing.
std::atomic<int64_t> g_allocations{0};

void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's temporary buffer, in the sort helpers kernels call): every
// replaceable new that pairs with the deletes below must be replaced, or ASan sees new vs free.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace sorun {
namespace {

// A fixture file; a library is this machine's build of it (tests/util/host_build.h: on aarch64 the TVM 0.27
// exports' aarch64 builds, testdata/relax/aarch64; the TVM 0.16 one is x86-64 only).
std::string Fixture(const std::string& file) { return testing::Runfile(testing::HostBuild("testdata/relax/" + file)); }

Tensor ReadNpy(const std::string& file) {
  auto t = ReadNpyFile(Fixture(file));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Tensor();
}

// Whether `a` is TVM's recorded output `b`. TVM recorded it by running the x86-64 file: there, bit for bit.
// Another architecture's build of the model rounds differently (NEON fused multiply-adds, other reduction
// orders): float32 outputs within 1e-5 of the output's scale (max(1, max |b|)); other dtypes still exact.
bool SameAsRecorded(const NDArray& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.shape() != b.shape() || a.nbytes() != b.nbytes()) return false;
  if (std::memcmp(a.data(), b.data(), b.nbytes()) == 0) return true;
  if (testing::RecordedBitForBit("testdata/relax/mlp.so") || DataTypeName(b.dtype()) != "float32") return false;
  const auto* x = static_cast<const float*>(a.data());
  const auto* e = static_cast<const float*>(b.data());
  const int64_t n = static_cast<int64_t>(b.nbytes() / sizeof(float));
  double scale = 1.0;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(static_cast<double>(e[i])));
  for (int64_t i = 0; i < n; ++i) {
    if (!(std::fabs(static_cast<double>(x[i]) - e[i]) <= 1e-5 * scale)) return false;  // NaN fails too
  }
  return true;
}

struct Case {
  std::string model;
  int outputs;
};

class RelaxModelTest : public ::testing::TestWithParam<Case> {};

// Every fixture: TVM's outputs, bit for bit, through the public API (twice: the second run reuses
// the first run's memory).
TEST_P(RelaxModelTest, MatchesTvmBitForBit) {
  const Case& c = GetParam();
  SORUN_SKIP_IF_FOREIGN_BUILD(Fixture(c.model + ".so"));
  auto model = Model::Load(Fixture(c.model + ".so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor input = ReadNpy(c.model + ".input_0.npy");
  for (int run = 0; run < 2; ++run) {
    auto outputs = exec->Run({{"x", input.dl()}});
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    ASSERT_EQ(static_cast<int>(outputs->size()), c.outputs);
    for (int k = 0; k < c.outputs; ++k) {
      Tensor expected = ReadNpy(c.model + ".output_" + std::to_string(k) + ".npy");
      EXPECT_TRUE(SameAsRecorded((*outputs)[static_cast<size_t>(k)], expected))
          << c.model << " output " << k << " run " << run;
    }
  }
  ASSERT_EQ(static_cast<int>(exec->outputs().size()), c.outputs);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RelaxModelTest,
                         ::testing::Values(Case{"mlp", 1}, Case{"cnn", 1}, Case{"dyn_batch", 2}, Case{"tir_par", 1},
                                           Case{"sort_topk", 4}, Case{"row_argmax", 2}, Case{"legacy_mlp", 1}),
                         [](const auto& info) { return info.param.model; });

StatusOr<ObjectPtr<relax::VmProgram>> ProgramOf(const std::string& path) {
  SORUN_ASSIGN_OR_RETURN(Module root, sorun::Load(path));
  relax::RelaxExecutableModule* vm = relax::AsRelaxExecutable(root);
  if (vm == nullptr) return InvalidArgument(path + " is not a Relax export");
  return vm->Program(path);
}

TEST(RelaxVmTest, SignatureFromTheBytecode) {
  auto model = Model::Load(Fixture("dyn_batch.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].shape, (std::vector<int64_t>{-1, 8}));
  ASSERT_EQ(model->outputs().size(), 2u);  // the tuple, flattened
  EXPECT_EQ(model->outputs()[0].shape, (std::vector<int64_t>{-1, 4}));
  auto mlp = Model::Load(Fixture("mlp.so"));
  ASSERT_TRUE(mlp.ok());
  ASSERT_EQ(mlp->outputs().size(), 1u);
  EXPECT_EQ(mlp->outputs()[0].shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(DataTypeName(mlp->outputs()[0].dtype), "float32");
}

// TVM 0.23+ spells bool as DLPack 1.x does (code 6, 8 bits; TVM 0.16 read those bits as e4m3_float8).
// bool_if.so takes a bool scalar that picks an If branch and returns a bool tensor: the API shows both
// as "bool" (Bool()), takes either spelling of bool as input, and the kernels still see their own.
TEST(RelaxVmTest, BoolInputsAndOutputsOfTvm027) {
  auto model = Model::Load(Fixture("bool_if.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->inputs().size(), 2u);
  EXPECT_EQ(model->inputs()[1].name, "c");
  EXPECT_EQ(DataTypeName(model->inputs()[1].dtype), "bool");
  EXPECT_TRUE(model->inputs()[1].shape.empty());
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor x = ReadNpy("bool_if.input_0.npy");
  Tensor c = ReadNpy("bool_if.input_1.npy");  // numpy's True, read as Bool()
  ASSERT_EQ(c.dtype(), Bool());
  auto outputs = exec->Run({{"x", x.dl()}, {"c", c.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_TRUE(SameAsRecorded((*outputs)[0], ReadNpy("bool_if.output_0.npy")));
  EXPECT_TRUE(SameAsRecorded((*outputs)[1], ReadNpy("bool_if.output_1.npy")));
  EXPECT_EQ(DataTypeName((*outputs)[1].dtype()), "bool");
  EXPECT_EQ(DataTypeName(exec->outputs()[1].dtype), "bool");

  // False, in DLPack's spelling (as numpy's __dlpack__ gives it): the other branch, y = x * x.
  auto no = NDArray::Empty({}, DLPackBool());
  ASSERT_TRUE(no.ok());
  *static_cast<uint8_t*>(no->data()) = 0;
  outputs = exec->Run({{"x", x.dl()}, {"c", &no->dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const float* xs = x.data_as<float>();
  const float* ys = static_cast<const float*>((*outputs)[0].data());
  const uint8_t* ms = static_cast<const uint8_t*>((*outputs)[1].data());
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(ys[i], xs[i] * xs[i]) << i;
    EXPECT_EQ(ms[i], xs[i] * xs[i] > 0.5f ? 1 : 0) << i;
  }
  auto not_bool = NDArray::Empty({}, UInt8());
  ASSERT_TRUE(not_bool.ok());
  EXPECT_ERROR(exec->SetInput("c", not_bool->dl()), StatusCode::kInvalidArgument, "input 'c'", "bool");
}

// An R.Prim("int64") parameter: the API shows a 0-d int64 input, takes it as a 0-d tensor and main
// receives its value (which prim_scale.so's kernel multiplies x by). Other shapes and dtypes are refused.
TEST(RelaxVmTest, PrimScalarInputsAreZeroDimTensors) {
  auto model = Model::Load(Fixture("prim_scale.so"));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ(model->inputs().size(), 2u);
  EXPECT_EQ(model->inputs()[1].name, "k");
  EXPECT_EQ(DataTypeName(model->inputs()[1].dtype), "int64");
  EXPECT_TRUE(model->inputs()[1].shape.empty());
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor x = ReadNpy("prim_scale.input_0.npy");
  Tensor k = ReadNpy("prim_scale.input_1.npy");  // 3
  auto outputs = exec->Run({{"x", x.dl()}, {"k", k.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_TRUE(SameAsRecorded((*outputs)[0], ReadNpy("prim_scale.output_0.npy")));

  auto minus_two = NDArray::Empty({}, Int64());
  ASSERT_TRUE(minus_two.ok());
  *minus_two->data_as<int64_t>() = -2;
  ASSERT_TRUE(exec->SetInputZeroCopy("k", minus_two->dl()).ok());  // a scalar is read, not shared
  *minus_two->data_as<int64_t>() = 5;                              // so this does not change the run
  ASSERT_TRUE(exec->Run().ok());
  auto y = exec->GetOutput(0);
  ASSERT_TRUE(y.ok());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y->data_as<float>()[i], x.data_as<float>()[i] * -2.0f) << i;

  auto one_d = NDArray::Empty({1}, Int64());
  auto int32 = NDArray::Empty({}, Int32());
  ASSERT_TRUE(one_d.ok() && int32.ok());
  EXPECT_ERROR(exec->SetInput("k", one_d->dl()), StatusCode::kInvalidArgument, "'k' is an R.Prim scalar",
               "0-d tensor of int64", "int64[1]");
  EXPECT_ERROR(exec->SetInput("k", int32->dl()), StatusCode::kInvalidArgument, "'k'", "int64", "int32[]");
}

// TVM writes constants at arbitrary offsets: sorun copies the unaligned ones once; after `sorun pack`
// (which realigns them) every constant is used in place.
TEST(RelaxVmTest, ConstantsCopiedWhenUnalignedAndInPlaceAfterPack) {
  auto original = ProgramOf(Fixture("mlp.so"));
  ASSERT_TRUE(original.ok()) << original.status().ToString();
  EXPECT_EQ((*original)->constants_copied(), 4);
  EXPECT_EQ((*original)->constant_bytes_in_place(), 0u);

  const std::string packed = testing::MakeTempDir("relax_vm") + "/mlp_packed.so";
  auto report = relax::PackRelaxLibrary(Fixture("mlp.so"), packed);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto program = ProgramOf(packed);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ((*program)->constants_copied(), 0);
  EXPECT_EQ((*program)->constant_bytes_in_place(), (16 * 32 + 32 + 32 * 10 + 10) * 4u);

  // In-place constants sit on copy-on-write pages: a write (what a crafted executable could make a
  // kernel do) copies the page for this process instead of faulting, and the file is untouched.
  const std::string before = testing::ReadFileOrDie(packed);
  for (const relax::VmValue& c : (*program)->constants()) {
    if (c.kind() != relax::VmValueKind::kTensor) continue;
    EXPECT_TRUE(c.tensor().read_only());
    std::memset(c.tensor().data(), 0x7f, 4);  // no SIGSEGV
  }
  EXPECT_EQ(testing::ReadFileOrDie(packed), before);

  // The packed model still gives TVM's outputs, reading its weights from the mapped file.
  // (A second copy of the file: the first one's constants were just overwritten in this process.)
  const std::string packed2 = testing::MakeTempDir("relax_vm") + "/mlp_packed2.so";
  ASSERT_TRUE(relax::PackRelaxLibrary(Fixture("mlp.so"), packed2).ok());
  auto model = Model::Load(packed2);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok());
  Tensor input = ReadNpy("mlp.input_0.npy");
  auto outputs = exec->Run({{"x", input.dl()}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_TRUE(SameAsRecorded((*outputs)[0], ReadNpy("mlp.output_0.npy")));
}

// Static shapes: the second and later runs allocate no storage and return outputs in the same memory.
TEST(RelaxVmTest, SteadyStateReusesMemory) {
  auto program = ProgramOf(Fixture("cnn.so"));
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto exec = relax::VmExecutor::Create(*program, {DLDevice{kDLCPU, 0}});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  Tensor input = ReadNpy("cnn.input_0.npy");
  ASSERT_TRUE((*exec)->SetInput(0, *input.dl()).ok());
  ASSERT_TRUE((*exec)->Run().ok());
  auto first = (*exec)->GetOutput(0);
  ASSERT_TRUE(first.ok());
  const void* data = first->data();
  const uint64_t storage = (*exec)->Memory()[0].activation_bytes;
  EXPECT_GT(storage, 0u);
  auto bound = (*exec)->GetInput(0);
  ASSERT_TRUE(bound.ok());
  const void* input_data = bound->data();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*exec)->SetInput(0, *input.dl()).ok());  // copied into the same executor-owned tensor
    ASSERT_TRUE((*exec)->Run().ok());
  }
  EXPECT_EQ((*exec)->GetInput(0)->data(), input_data);

  // No heap allocation at all in a steady-state run (registers, storage, views, kernel arguments reused).
  const int64_t before = g_allocations.load();
  for (int i = 0; i < 5; ++i) {
    if (!(*exec)->Run().ok()) break;
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  auto later = (*exec)->GetOutput(0);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->data(), data);
  EXPECT_EQ((*exec)->Memory()[0].activation_bytes, storage);
}

TEST(RelaxVmTest, BadInputsNameTheInput) {
  auto model = Model::Load(Fixture("mlp.so"));
  ASSERT_TRUE(model.ok());
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok());
  auto wrong_shape = NDArray::Empty({1, 17}, DLDataType{kDLFloat, 32, 1});
  ASSERT_TRUE(wrong_shape.ok());
  EXPECT_ERROR(exec->SetInput("x", wrong_shape->dl()), StatusCode::kInvalidArgument, "input 'x'", "[1, 16]");
  auto wrong_dtype = NDArray::Empty({1, 16}, DLDataType{kDLInt, 32, 1});
  ASSERT_TRUE(wrong_dtype.ok());
  EXPECT_ERROR(exec->SetInput(0, wrong_dtype->dl()), StatusCode::kInvalidArgument, "input 'x'", "float32");
  EXPECT_ERROR(exec->SetInput("y", wrong_dtype->dl()), StatusCode::kNotFound, "no input named 'y'", "x");
  EXPECT_ERROR(exec->Run(), StatusCode::kFailedPrecondition, "input 'x' is not set");
  EXPECT_ERROR(exec->GetOutput(0).status(), StatusCode::kFailedPrecondition, "Run");
  // A dynamic dimension takes any size; the static one is still checked.
  auto dyn = Model::Load(Fixture("dyn_batch.so"));
  ASSERT_TRUE(dyn.ok());
  auto dyn_exec = dyn->NewExecutor();
  ASSERT_TRUE(dyn_exec.ok());
  auto batch5 = NDArray::Empty({5, 8}, DLDataType{kDLFloat, 32, 1});
  ASSERT_TRUE(batch5.ok());
  std::memset(batch5->data(), 0, batch5->nbytes());
  auto out = dyn_exec->Run({{"x", &batch5->dl()}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{5, 4}));
  auto bad_width = NDArray::Empty({5, 9}, DLDataType{kDLFloat, 32, 1});
  ASSERT_TRUE(bad_width.ok());
  EXPECT_ERROR(dyn_exec->SetInput("x", bad_width->dl()), StatusCode::kInvalidArgument, "input 'x'", "[?, 8]");
}

// Executors of one model run concurrently (one per thread), sharing the program's constants.
TEST(RelaxVmTest, ExecutorsOfOneModelRunInParallel) {
  auto model = Model::Load(Fixture("cnn.so"));
  ASSERT_TRUE(model.ok());
  Tensor input = ReadNpy("cnn.input_0.npy");
  Tensor expected = ReadNpy("cnn.output_0.npy");
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto exec = model->NewExecutor();
      if (!exec.ok()) return;
      for (int i = 0; i < 20; ++i) {
        auto out = exec->Run({{"x", input.dl()}});
        if (out.ok() && SameAsRecorded((*out)[0], expected)) ++good[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(good[static_cast<size_t>(t)], 20) << "thread " << t;
}

TEST(RelaxVmTest, ZeroCopyInputNeedsAlignment) {
  auto model = Model::Load(Fixture("mlp.so"));
  ASSERT_TRUE(model.ok());
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok());
  std::vector<float> buffer(16 + 64);
  DLTensor t{};
  int64_t shape[2] = {1, 16};
  t.data = reinterpret_cast<uint8_t*>(buffer.data()) + 4 - (reinterpret_cast<uintptr_t>(buffer.data()) % 64) + 64;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 2;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  EXPECT_ERROR(exec->SetInputZeroCopy("x", t), StatusCode::kInvalidArgument, "not 64-byte aligned");
  Tensor input = ReadNpy("mlp.input_0.npy");  // sorun's npy reader allocates 64-byte aligned
  ASSERT_TRUE(exec->SetInputZeroCopy("x", *input.dl()).ok());
  ASSERT_TRUE(exec->Run().ok());
  auto out = exec->GetOutput(0);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(SameAsRecorded(*out, ReadNpy("mlp.output_0.npy")));
}

TEST(RelaxVmTest, ProfileNamesKernels) {
  auto model = Model::Load(Fixture("mlp.so"));
  ASSERT_TRUE(model.ok());
  auto exec = model->NewExecutor();
  ASSERT_TRUE(exec.ok());
  Tensor input = ReadNpy("mlp.input_0.npy");
  ASSERT_TRUE(exec->SetInput("x", *input.dl()).ok());
  auto profile = exec->Profile(2);
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  std::vector<std::string> kernels;
  for (const NodeProfile& p : *profile) kernels.push_back(p.func_name);
  EXPECT_EQ(kernels, (std::vector<std::string>{"matmul", "add", "relu", "matmul1", "add1"}));
}

// Found by relax_vm_fuzzer (fuzz/README.md): the executable is data, so numbers in its bytecode that size
// something are bounded before use. check_tensor_info's ndim immediate sized main's input description
// (a 2^40-element vector: an allocation far beyond memory) before this was checked.
TEST(RelaxVmTest, FuzzFindingsAreStatuses) {
  auto mlp = ProgramOf(Fixture("mlp.so"));
  ASSERT_TRUE(mlp.ok()) << mlp.status().ToString();
  namespace t = relax::testing;
  t::FixtureExecutable e;
  e.functions = {{1, "main", 0, 2, 1, 2, {"x"}}, {0, "vm.builtin.check_tensor_info"}};
  e.AddDataType(kDLFloat, 32);
  e.AddString("ErrorContext(param=x)");
  e.instructions = {{1, t::kVoid, 1, 4, t::Reg(0), t::Imm(int64_t{1} << 40), t::Const(0), t::Const(1)}, {2, 0}};
  const std::string bytes = e.Serialize();
  auto exec = relax::ParseVmExecutable(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                       relax::ConstantTagDialect::kFfiTypeIndex);
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  auto program = relax::VmProgram::Create(std::make_shared<const relax::VmExecutable>(std::move(*exec)), nullptr,
                                          (*mlp)->kernel_library(), relax::KernelAbi::kFfi, "ndim.so");
  EXPECT_ERROR(program.status(), StatusCode::kDataLoss, "ndim.so", "parameter 'x'", "1099511627776 dimensions");

  // An instruction outside every function (it indexed callee 99 of 2 while the program checked memory
  // scopes) is refused by the validator: an executable holds function code only.
  e.functions = {{1, "main", 0, 1, 1, 2, {"x"}}, {0, "vm.builtin.check_tensor_info"}};
  e.instructions = {{2, 0}, {1, t::kVoid, 99, 1, t::Const(77)}};
  const std::string dead = e.Serialize();
  exec = relax::ParseVmExecutable(reinterpret_cast<const uint8_t*>(dead.data()), dead.size(),
                                  relax::ConstantTagDialect::kFfiTypeIndex);
  EXPECT_ERROR(exec.status(), StatusCode::kDataLoss, "instruction 1", "lies in no vm function");
}

// An executor of a hand-made executable `e` (tvm-ffi constant tags) over mlp.so's kernel library, with
// mlp's input bound to parameter 0.
StatusOr<std::unique_ptr<relax::VmExecutor>> CraftedOnMlpKernels(const relax::testing::FixtureExecutable& e,
                                                                 const std::string& name) {
  SORUN_ASSIGN_OR_RETURN(auto mlp, ProgramOf(Fixture("mlp.so")));
  const std::string bytes = e.Serialize();
  SORUN_ASSIGN_OR_RETURN(auto exec, relax::ParseVmExecutable(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                             bytes.size(), relax::ConstantTagDialect::kFfiTypeIndex));
  SORUN_ASSIGN_OR_RETURN(auto program,
                         relax::VmProgram::Create(std::make_shared<const relax::VmExecutable>(std::move(exec)), nullptr,
                                                  mlp->kernel_library(), relax::KernelAbi::kFfi, name));
  SORUN_ASSIGN_OR_RETURN(auto executor, relax::VmExecutor::Create(program, {DLDevice{kDLCPU, 0}}));
  Tensor input = ReadNpy("mlp.input_0.npy");
  SORUN_RETURN_IF_ERROR(executor->SetInput(0, *input.dl()));
  return executor;
}

// Found by relax_vm_fuzzer: a kernel given null (a register never written, or null_value) for a tensor
// parameter. TVM's kernels accept a null handle there and then read through it (a SEGV in a TVM 0.16
// kernel); the VM refuses the call, naming the kernel and argument.
TEST(RelaxVmTest, KernelsNeverReceiveNull) {
  const std::vector<std::string> kernels = relax::testing::KernelNames(Fixture("mlp.so"));
  ASSERT_FALSE(kernels.empty());
  namespace t = relax::testing;
  t::FixtureExecutable e;
  e.functions = {{1, "main", 0, 2, 1, 3, {"x"}}, {0, kernels[0]}};
  e.instructions = {{1, 2, 1, 2, t::Reg(0), t::Reg(1)}, {2, 0}};
  auto executor = CraftedOnMlpKernels(e, "null_arg.so");
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  EXPECT_ERROR((*executor)->Run(), StatusCode::kInvalidArgument, "kernel '" + kernels[0] + "' argument 1 is null");
}

// Recursion is bounded by the registers live frames hold (and the call depth): main(x) = main(x) with
// 2^20 registers per frame stops at the fifth frame with a Status, and the frames' memory is given back.
TEST(RelaxVmTest, RecursionIsBoundedByLiveRegisters) {
  namespace t = relax::testing;
  t::FixtureExecutable e;
  e.functions = {{1, "main", 0, 2, 1, int64_t{1} << 20, {"x"}}};
  e.instructions = {{1, 1, 0, 1, t::Reg(0)}, {2, 1}};
  auto executor = CraftedOnMlpKernels(e, "recursive.so");
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  EXPECT_ERROR((*executor)->Run(), StatusCode::kResourceExhausted, "4194304 VM registers", "'main' instruction 0");
  EXPECT_ERROR((*executor)->Run(), StatusCode::kResourceExhausted, "VM registers");  // again: nothing leaked
}

}  // namespace
}  // namespace sorun
