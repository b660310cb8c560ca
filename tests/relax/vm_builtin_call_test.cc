// relax/vm_builtin_call: builtin calls dispatched through the table's handlers, on hand-made bytecode
// that calls builtins only (no kernel library): the results, and each error in full (what was
// expected, led by the call's error context, annotated with the instruction).
#include "relax/vm_builtin_call.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relax/vm_executor.h"
#include "tests/relax/relax_fixtures.h"

namespace sorun {
namespace relax {
namespace {

namespace t = testing;

// A call instruction: dst = builtin(args...).
std::vector<int64_t> Call(int64_t dst, Builtin builtin, const std::vector<int64_t>& args) {
  std::vector<int64_t> words = {1, dst, 1 + static_cast<int64_t>(builtin), static_cast<int64_t>(args.size())};
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

// Runs main(x) = `body`, then `ret %<ret>`, with x a float32[2, 3] of zeros; the function table is main
// and then every row of the table (function 1 + Builtin(i)); c[0] is an error context, c[1] float32.
// The run's status, and in `out` main's first output when it succeeded.
Status RunMain(std::vector<std::vector<int64_t>> body, int64_t ret = 0, Tensor* out = nullptr) {
  t::FixtureExecutable e;
  const int64_t n = static_cast<int64_t>(body.size()) + 1;
  e.functions = {{1, "main", 0, n, 1, 4, {"x"}}};
  for (const BuiltinRow& row : kBuiltinRows) e.functions.push_back({0, row.name});
  e.AddString("ErrorContext(fn=main)");
  e.AddDataType(kDLFloat, 32);
  e.instructions = std::move(body);
  e.instructions.push_back({2, ret});
  const std::string bytes = e.Serialize();
  SORUN_ASSIGN_OR_RETURN(auto exec, ParseVmExecutable(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                                                      ConstantTagDialect::kFfiTypeIndex));
  SORUN_ASSIGN_OR_RETURN(auto program, VmProgram::Create(std::make_shared<const VmExecutable>(std::move(exec)), nullptr,
                                                         Module(), KernelAbi::kFfi, "builtins.so"));
  SORUN_ASSIGN_OR_RETURN(auto executor, VmExecutor::Create(program, {DLDevice{kDLCPU, 0}}));
  SORUN_ASSIGN_OR_RETURN(Tensor x, Tensor::Empty({2, 3}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0}));
  SORUN_RETURN_IF_ERROR(executor->SetInput(0, *x.dl()));
  SORUN_RETURN_IF_ERROR(executor->Run());
  if (out == nullptr) return Status::Ok();
  SORUN_ASSIGN_OR_RETURN(*out, executor->GetOutput(0));
  return Status::Ok();
}

std::string Message(const Status& s) { return s.ok() ? "OK" : s.ToString(); }

// Operands: x (main's parameter), the error context, the float32 dtype, %void, %vm, an immediate.
const int64_t x = t::Reg(0), err = t::Const(0), f32 = t::Const(1), v = t::Reg(t::kVoid), vm = t::Reg(t::kVm);
int64_t I(int64_t value) { return t::Imm(value); }

// main's body after a first null_value call (so that no check leads main: those check the inputs).
Status RunAfterNull(std::vector<std::vector<int64_t>> body, int64_t ret = 0, Tensor* out = nullptr) {
  body.insert(body.begin(), Call(3, Builtin::kNullValue, {}));
  return RunMain(std::move(body), ret, out);
}

TEST(VmBuiltinCallTest, ErrorsNameWhatWasExpected) {
  const std::vector<std::pair<std::vector<std::vector<int64_t>>, std::string>> cases = {
      {{Call(t::kVoid, Builtin::kCheckTensorInfo, {x, I(3), f32, err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_tensor_info): ErrorContext(fn=main): expected a "
       "tensor of ndim 3, got float32[2, 3] on cpu:0"},
      {{Call(t::kVoid, Builtin::kCheckTensorInfo, {x})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_tensor_info): takes 3-4 arguments, got 1"},
      {{Call(t::kVoid, Builtin::kCheckShapeInfo, {x, I(2), err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_shape_info): ErrorContext(fn=main): expected a "
       "shape, got a tensor float32[2, 3] on cpu:0"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(5)}),
        Call(t::kVoid, Builtin::kCheckShapeInfo, {t::Reg(1), I(2), err})},
       "invalid_argument: 'main' instruction 2 (call vm.builtin.check_shape_info): ErrorContext(fn=main): expected a "
       "shape of 2 dims, got shape (5)"},
      {{Call(t::kVoid, Builtin::kCheckTupleInfo, {x, I(1), err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_tuple_info): ErrorContext(fn=main): expected a "
       "tuple, got a tensor float32[2, 3] on cpu:0"},
      {{Call(1, Builtin::kMakeTuple, {x}), Call(t::kVoid, Builtin::kCheckTupleInfo, {t::Reg(1), I(-1), err})},
       "invalid_argument: 'main' instruction 2 (call vm.builtin.check_tuple_info): ErrorContext(fn=main): expected a "
       "tuple of -1, got tuple of 1"},
      {{Call(t::kVoid, Builtin::kCheckFuncInfo, {x, err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_func_info): ErrorContext(fn=main): expected a "
       "function, got a tensor float32[2, 3] on cpu:0"},
      {{Call(t::kVoid, Builtin::kCheckPrimValueInfo, {x, f32, err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.check_prim_value_info): ErrorContext(fn=main): "
       "expected a scalar, got a tensor float32[2, 3] on cpu:0"},
      {{Call(t::kVoid, Builtin::kMatchShape, {x, v, I(2), I(0), I(2), I(0), I(4), err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.match_shape): ErrorContext(fn=main): shape[1] is 3, "
       "expected 4"},
      {{Call(t::kVoid, Builtin::kMatchShape, {x, v, I(2), I(1), I(0), I(0), I(3), err})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.match_shape): the shape heap is a null"},
      {{Call(t::kVoid, Builtin::kMatchShape, {x, v})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.match_shape): takes at least 4 arguments, got 2"},
      {{Call(1, Builtin::kAllocShapeHeap, {vm, I(1)}),
        Call(t::kVoid, Builtin::kMatchShape, {x, t::Reg(1), I(2), I(1), I(0), I(3), I(0), err})},
       "invalid_argument: 'main' instruction 2 (call vm.builtin.match_shape): ErrorContext(fn=main): shape[1] is 3, "
       "expected 2 (as an earlier dimension)"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(1), I(0)})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.make_shape): the shape heap is a null"},
      {{Call(1, Builtin::kMakeShape, {v, I(2), I(0)})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.make_shape): makes 2 dims from 3 arguments"},
      {{Call(1, Builtin::kMakeShape, {v})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.make_shape): takes at least 2 arguments, got 1"},
      {{Call(1, Builtin::kAllocShapeHeap, {vm, I(-1)})},
       "out_of_range: 'main' instruction 1 (call vm.builtin.alloc_shape_heap): shape heap of -1 slots (at most "
       "1048576)"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(4)}), Call(2, Builtin::kReshape, {x, t::Reg(1)})},
       "invalid_argument: 'main' instruction 2 (call vm.builtin.reshape): reshape of float32[2, 3] on cpu:0 to shape "
       "(4) changes the element count"},
      {{Call(1, Builtin::kMakeTuple, {x}), Call(2, Builtin::kTupleGetItem, {t::Reg(1), I(3)})},
       "out_of_range: 'main' instruction 2 (call vm.builtin.tuple_getitem): index 3 of a tuple of 1"},
      {{Call(1, Builtin::kTupleGetItem, {x, I(0)})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.tuple_getitem): argument 0 is a tensor float32[2, 3] "
       "on cpu:0, expected a tuple"},
      {{Call(1, Builtin::kReadIfCond, {x})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.read_if_cond): if condition float32[2, 3] on cpu:0 is "
       "not an integer scalar"},
      {{Call(1, Builtin::kCopy, {x, x})},
       "invalid_argument: 'main' instruction 1 (call vm.builtin.copy): takes 1 arguments, got 2"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(64)}),
        Call(2, Builtin::kAllocStorage, {vm, t::Reg(1), I(7), f32})},
       "out_of_range: 'main' instruction 2 (call vm.builtin.alloc_storage): device index 7 outside the executor's 1 "
       "devices"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(64)}),
        Call(2, Builtin::kAllocStorage, {vm, t::Reg(1), I(-1), f32}),
        Call(3, Builtin::kAllocTensor, {t::Reg(2), I(-8), t::Reg(1), f32})},
       "invalid_argument: 'main' instruction 3 (call vm.builtin.alloc_tensor): negative offset -8"},
      {{Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(64)}),
        Call(2, Builtin::kAllocStorage, {vm, t::Reg(1), I(-1), f32}),
        Call(3, Builtin::kAllocTensor, {t::Reg(2), I(8), t::Reg(1), f32})},
       "invalid_argument: 'main' instruction 3 (call vm.builtin.alloc_tensor): view float32[64] at byte 8 needs 256 "
       "bytes but the storage has 64"},
  };
  for (const auto& c : cases) EXPECT_EQ(Message(RunAfterNull(c.first)), c.second);
}

TEST(VmBuiltinCallTest, ValuesFlowThroughTheHandlers) {
  // The shape heap: match_shape stores x's dims (2, 3), make_shape reads them back swapped, reshape views x.
  Tensor out;
  ASSERT_EQ(
      Message(RunAfterNull({Call(1, Builtin::kAllocShapeHeap, {vm, I(2)}),
                            Call(t::kVoid, Builtin::kMatchShape, {x, t::Reg(1), I(2), I(1), I(0), I(1), I(1), err}),
                            Call(2, Builtin::kMakeShape, {t::Reg(1), I(2), I(1), I(1), I(1), I(0)}),
                            Call(1, Builtin::kReshape, {x, t::Reg(2)})},
                           1, &out)),
      "OK");
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2}));
  // A tuple of x, checked, its field 0 copied out.
  ASSERT_EQ(Message(RunAfterNull(
                {Call(1, Builtin::kMakeTuple, {x}), Call(t::kVoid, Builtin::kCheckTupleInfo, {t::Reg(1), I(1), err}),
                 Call(2, Builtin::kTupleGetItem, {t::Reg(1), I(0)}), Call(1, Builtin::kCopy, {t::Reg(2)})},
                1, &out)),
            "OK");
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3}));
  // Storage of 64 bytes on the host device (-1), a float32[16] tensor in it.
  ASSERT_EQ(Message(RunAfterNull({Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(64)}),
                                  Call(2, Builtin::kAllocStorage, {vm, t::Reg(1), I(-1), f32}),
                                  Call(1, Builtin::kMakeShape, {v, I(1), I(0), I(16)}),
                                  Call(1, Builtin::kAllocTensor, {t::Reg(2), I(0), t::Reg(1), f32})},
                                 1, &out)),
            "OK");
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{16}));
}

}  // namespace
}  // namespace relax
}  // namespace sorun
