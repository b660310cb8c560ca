// The registry of executor kinds (executor/executor_registry.h) with fake kinds: a root no linked kind
// claims is FailedPrecondition naming the root's type and the roots the linked kinds run; a three-file
// deployment needs a kind that offers it; kinds are asked in registration order, registering one again
// is a no-op, and registration may race with lookups. This binary links no real kind (no graph_executor/,
// no relax/), so the registry starts empty. It is process-wide with no way back, so the one test below
// goes through its stages in order.
#include "executor/executor_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/util/status_matchers.h"
#include "tests/util/test_module.h"

namespace sorun {
namespace {

// A root module of a given type key (the kinds below claim theirs by it).
class RootModule final : public ModuleNode {
 public:
  explicit RootModule(const char* type_key) : type_key_(type_key) {}
  const char* type_key() const override { return type_key_; }
  PackedFunc GetFunction(std::string_view, const ObjectPtr<ModuleNode>&) override { return PackedFunc(); }

 private:
  const char* type_key_;
};

Module Root(const char* type_key) { return Module(ObjectPtr<ModuleNode>(MakeObject<RootModule>(type_key))); }

// An executable that only says what made it.
class FakeExecutable final : public Executable {
 public:
  FakeExecutable(ExecutorKind kind, std::string made_from) : Executable(kind), made_from_(std::move(made_from)) {
    Describe(ModelSignature::Make({}, {}), ExecutorCapabilities{});
  }
  StatusOr<std::unique_ptr<ModelExecutor>> NewExecutor(std::vector<DLDevice>,
                                                       std::shared_ptr<ThreadPool>) const override {
    return Unimplemented("a fake executable");
  }
  const std::string& made_from() const { return made_from_; }

 private:
  std::string made_from_;
};

constexpr char kVmRoot[] = "fake_vm_root";
constexpr char kGraphRoot[] = "fake_graph_root";
constexpr char kBrokenGraphRoot[] = "broken_graph_root";

// The VM-like kind: claims kVmRoot; no three-file form.
StatusOr<ObjectPtr<Executable>> VmFromRoot(const Module& root, const std::string& path) {
  if (!root.defined() || std::string(root.type_key()) != kVmRoot) return ObjectPtr<Executable>();
  return ObjectPtr<Executable>(MakeObject<FakeExecutable>(ExecutorKind::kRelaxVm, path));
}

// The graph-like kind: claims kGraphRoot, refuses a broken root of its type, builds three-file models.
StatusOr<ObjectPtr<Executable>> GraphFromRoot(const Module& root, const std::string& path) {
  if (!root.defined()) return ObjectPtr<Executable>();
  const std::string type = root.type_key();
  if (type == kBrokenGraphRoot) return DataLoss(path + ": a broken graph root");
  if (type != kGraphRoot) return ObjectPtr<Executable>();
  return ObjectPtr<Executable>(MakeObject<FakeExecutable>(ExecutorKind::kGraph, path));
}

StatusOr<ObjectPtr<Executable>> GraphFromFiles(const std::string& graph_json_path, const Module& library,
                                               const std::string& params_path) {
  return ObjectPtr<Executable>(
      MakeObject<FakeExecutable>(ExecutorKind::kGraph, graph_json_path + "|" + library.type_key() + "|" + params_path));
}

// Another VM kind's hooks: registering ExecutorKind::kRelaxVm again must not replace the first.
StatusOr<ObjectPtr<Executable>> ClaimsEverything(const Module&, const std::string& path) {
  return ObjectPtr<Executable>(MakeObject<FakeExecutable>(ExecutorKind::kRelaxVm, "impostor " + path));
}

ExecutorKindHooks VmKind() {
  ExecutorKindHooks k;
  k.kind = ExecutorKind::kRelaxVm;
  k.root_description = "a fake VM executable";
  k.from_root = VmFromRoot;
  return k;
}

ExecutorKindHooks GraphKind() {
  ExecutorKindHooks k;
  k.kind = ExecutorKind::kGraph;
  k.root_description = "a fake GraphExecutorFactory";
  k.from_root = GraphFromRoot;
  k.from_files = GraphFromFiles;
  return k;
}

const FakeExecutable* AsFake(const StatusOr<ObjectPtr<Executable>>& e) {
  return e.ok() ? dynamic_cast<const FakeExecutable*>(e->get()) : nullptr;
}

TEST(ExecutorRegistryTest, StagesOfRegistration) {
  const Module library = testing::MakeTestValue("kernels", 1);  // type key "sorun_test_value"
  const Module stranger = testing::MakeTestValue("stranger", 2);

  {
    SCOPED_TRACE("nothing linked");
    EXPECT_TRUE(LinkedExecutorKinds().empty());
    EXPECT_ERROR(ExecutableOfModel(stranger, "m.so").status(), StatusCode::kFailedPrecondition,
                 "the model's root module is 'sorun_test_value'", "it links no executor");
    EXPECT_ERROR(ExecutableOfModel(Module(), "m.so").status(), StatusCode::kFailedPrecondition, "'null'");
    EXPECT_ERROR(ExecutableFromFiles("g.json", library, "p.params").status(), StatusCode::kFailedPrecondition, "g.json",
                 "three-file deployment", "(it links: none)");
    // A kind without from_root is refused.
    ExecutorKindHooks no_root = VmKind();
    no_root.from_root = nullptr;
    EXPECT_ERROR(RegisterExecutorKind(no_root), StatusCode::kInvalidArgument, "from_root");
    EXPECT_TRUE(LinkedExecutorKinds().empty());
  }

  {
    SCOPED_TRACE("a VM-like kind, no three-file form");
    ASSERT_TRUE(RegisterExecutorKind(VmKind()).ok());
    EXPECT_EQ(LinkedExecutorKinds(), (std::vector<ExecutorKind>{ExecutorKind::kRelaxVm}));
    auto vm = ExecutableOfModel(Root(kVmRoot), "vm.so");
    ASSERT_TRUE(vm.ok()) << vm.status().ToString();
    ASSERT_NE(AsFake(vm), nullptr);
    EXPECT_EQ((*vm)->kind(), ExecutorKind::kRelaxVm);
    EXPECT_EQ(AsFake(vm)->made_from(), "vm.so");
    Status unclaimed = ExecutableOfModel(stranger, "m.so").status();
    EXPECT_ERROR(unclaimed, StatusCode::kFailedPrecondition, "'sorun_test_value', not a fake VM executable");
    EXPECT_EQ(unclaimed.message().find("three-file"), std::string::npos) << "no linked kind offers it";
    EXPECT_ERROR(ExecutableFromFiles("g.json", library, "").status(), StatusCode::kFailedPrecondition, "g.json",
                 "needs the graph executor", "(it links: Relax VM)");
  }

  {
    SCOPED_TRACE("the graph-like kind registers while other threads look up");
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    std::vector<std::thread> lookers;
    for (int t = 0; t < 3; ++t) {
      lookers.emplace_back([&] {
        while (!stop.load(std::memory_order_acquire)) {
          // Before the registration: refused; after: the graph kind's. Never anything else.
          auto graph = ExecutableOfModel(Root(kGraphRoot), "g.so");
          const bool before = !graph.ok() && graph.status().code() == StatusCode::kFailedPrecondition;
          const bool after = graph.ok() && (*graph)->kind() == ExecutorKind::kGraph;
          auto vm = ExecutableOfModel(Root(kVmRoot), "vm.so");
          const size_t linked = LinkedExecutorKinds().size();
          if (!(before || after) || !vm.ok() || linked < 1 || linked > 2) ++wrong;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(RegisterExecutorKind(GraphKind()).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop.store(true, std::memory_order_release);
    for (std::thread& th : lookers) th.join();
    EXPECT_EQ(wrong.load(), 0);
  }

  {
    SCOPED_TRACE("both kinds");
    EXPECT_EQ(LinkedExecutorKinds(), (std::vector<ExecutorKind>{ExecutorKind::kRelaxVm, ExecutorKind::kGraph}));
    auto graph = ExecutableOfModel(Root(kGraphRoot), "g.so");
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    EXPECT_EQ((*graph)->kind(), ExecutorKind::kGraph);
    // Every linked kind's root named, in registration order, and the three-file form suggested.
    EXPECT_ERROR(ExecutableOfModel(stranger, "m.so").status(), StatusCode::kFailedPrecondition,
                 "the model's root module is 'sorun_test_value', not a fake VM executable or a fake "
                 "GraphExecutorFactory",
                 "three-file deployment");
    // A kind's refusal of a root of its own type is the answer (not "no kind claims it").
    EXPECT_ERROR(ExecutableOfModel(Root(kBrokenGraphRoot), "b.so").status(), StatusCode::kDataLoss,
                 "b.so: a broken graph root");
    auto files = ExecutableFromFiles("g.json", library, "p.params");
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    ASSERT_NE(AsFake(files), nullptr);
    EXPECT_EQ(AsFake(files)->made_from(), "g.json|sorun_test_value|p.params");
  }

  {
    SCOPED_TRACE("registering a kind again is a no-op");
    ExecutorKindHooks impostor = VmKind();
    impostor.root_description = "an impostor";
    impostor.from_root = ClaimsEverything;
    ASSERT_TRUE(RegisterExecutorKind(impostor).ok());
    EXPECT_EQ(LinkedExecutorKinds().size(), 2u);
    auto graph = ExecutableOfModel(Root(kGraphRoot), "g.so");  // the impostor would have claimed it first
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    EXPECT_EQ((*graph)->kind(), ExecutorKind::kGraph);
    Status unclaimed = ExecutableOfModel(stranger, "m.so").status();
    EXPECT_ERROR(unclaimed, StatusCode::kFailedPrecondition, "not a fake VM executable");
    EXPECT_EQ(unclaimed.message().find("impostor"), std::string::npos) << unclaimed.message();
  }
}

}  // namespace
}  // namespace sorun
