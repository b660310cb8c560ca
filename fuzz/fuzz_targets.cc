#include "fuzz/fuzz_targets.h"

#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/model_loading.h"
#include "backends/cuda/cuda_module.h"
#include "backends/device_module_payload.h"
#include "backends/opencl/opencl_devices.h"
#include "backends/opencl/opencl_module.h"
#include "base/xxhash64.h"
#include "format/binary_reader.h"
#include "format/binary_writer.h"
#include "format/elf_preflight.h"
#include "format/tar_archive.h"
#include "fuzz/fuzz_common.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_executable.h"
#include "graph_executor/graph_executor.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/memory_plan.h"
#include "inspect/elf_reader.h"
#include "packer/tar_writer.h"
#include "runtime/blob_loader.h"
#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/module.h"
#include "runtime/packed_func.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "runtime/tensor_io.h"
#include "serialization/blob_checksum.h"
#include "serialization/module_blob.h"
#include "tools/npy.h"

namespace sorun {
namespace fuzz {
namespace {

// A 64-byte aligned private copy of the input that outlives zero-copy tensors pointing into it, like
// the mapped shared library does for the real loader.
class FuzzBuffer final : public Object {
 public:
  FuzzBuffer(const uint8_t* data, size_t size) : size_(size) {
    void* p = nullptr;
    FUZZ_CHECK(posix_memalign(&p, 64, size == 0 ? 1 : size) == 0, "posix_memalign");
    bytes_ = static_cast<uint8_t*>(p);
    if (size) std::memcpy(bytes_, data, size);
  }
  ~FuzzBuffer() override { std::free(bytes_); }
  const uint8_t* data() const { return bytes_; }
  size_t size() const { return size_; }

 private:
  uint8_t* bytes_ = nullptr;
  size_t size_;
};

// Touches the first and last byte of every tensor argument, so a view that pokes out of its storage
// is an ASan report.
volatile uint8_t g_sink;

Status TouchTensorArgs(PackedArgs args) {
  for (int i = 0; i < args.size(); ++i) {
    if (args.code(i) != kTVMDLTensorHandle) continue;
    const auto* t = static_cast<const DLTensor*>(args.value(i).v_handle);
    if (t == nullptr) return InvalidArgument("null DLTensor");
    SORUN_ASSIGN_OR_RETURN(uint64_t bytes, ShapeByteSize(t->shape, t->ndim, t->dtype));
    if (bytes == 0) continue;
    const uint8_t* p = static_cast<const uint8_t*>(t->data) + t->byte_offset;
    g_sink = p[0];
    g_sink = p[bytes - 1];
  }
  return Status::Ok();
}

// A kernel library where every function name exists and only touches its tensors.
class FakeKernelLibrary final : public ModuleNode {
 public:
  const char* type_key() const override { return keys::kTypeKeyLibrary; }
  // Stands in for a kernel library: the graph's kernels are its functions (runtime/module.h).
  bool provides_kernels() const override { return true; }
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override {
    if (name == keys::kSymbolLookupLinkedParam) return PackedFunc();
    return PackedFunc::FromBody(std::string(name), [](PackedArgs args, Value*) { return TouchTensorArgs(args); });
  }
};

Module MakeFakeKernelLibrary() { return Module(ObjectPtr<ModuleNode>(MakeObject<FakeKernelLibrary>())); }

// Plans memory on the CPU and, when small, builds an executor over fake kernels and runs it once.
void PlanAndRun(const char* target, const std::shared_ptr<const GraphSpec>& graph,
                const ObjectPtr<SharedWeights>& weights, const Module& kernel_lib) {
  std::vector<bool> bound(graph->num_entries(), false);
  auto plan = PlanMemory(*graph, {CpuDevice()}, bound);
  if (!plan.ok()) {
    Note(target, plan.status());
    return;
  }
  FUZZ_CHECK(plan->entry_pool.size() == graph->num_entries(), "plan covers every entry");
  for (uint32_t e = 0; e < graph->num_entries(); ++e) {
    FUZZ_CHECK(plan->entry_pool[e] >= 0 && static_cast<size_t>(plan->entry_pool[e]) < plan->pools.size(),
               "entry pool in range");
    FUZZ_CHECK(graph->EntryBytes(e) <= plan->pools[static_cast<size_t>(plan->entry_pool[e])].bytes,
               "pool holds its entries");
  }
  plan->Describe();
  if (!SmallEnoughToRun(*graph, *plan)) return;
  auto exec = GraphExecutor::Create(graph, kernel_lib, {CpuDevice()}, weights);
  if (!exec.ok()) {
    Note(target, exec.status());
    return;
  }
  Note(target, (*exec)->Run());
  (*exec)->InputInfo(true);
  (*exec)->OutputInfo();
  for (int i = 0; i < (*exec)->num_outputs(); ++i) FUZZ_CHECK((*exec)->GetOutput(i).ok(), "output");
}

// Factory-level checks shared by the blob and factory-payload targets.
void ExerciseFactory(const char* target, GraphExecutorFactoryNode* factory) {
  // Params round trip: the dictionary the factory hands out (get_graph_params) reads back.
  BinaryWriter w;
  Status written = WriteParamsDict(factory->weights()->params(), &w, /*align_data=*/false);
  FUZZ_CHECK(written.ok(), written.ToString());
  BinaryReader r(reinterpret_cast<const uint8_t*>(w.bytes().data()), w.size(), "params round trip");
  auto back = ReadParamsDict(r, /*allow_zero_copy=*/false);
  FUZZ_CHECK(back.ok(), back.status().ToString());
  FUZZ_CHECK(back->size() == factory->weights()->params().size(), "params round trip count");
  // Payload round trip: what SaveToBinary writes loads again.
  BinaryWriter payload(8);
  Status saved = factory->SaveToBinary(&payload);
  FUZZ_CHECK(saved.ok(), saved.ToString());
  BinaryReader pr(reinterpret_cast<const uint8_t*>(payload.bytes().data()), payload.size(), "factory round trip");
  auto reloaded = LoadGraphExecutorFactory(pr);
  FUZZ_CHECK(reloaded.ok(), reloaded.status().ToString());
  FUZZ_CHECK(pr.at_end(), "factory round trip consumed everything");
  // Fake kernels always: the factory's first import may be a device module, whose kernels must not run.
  PlanAndRun(target, factory->graph(), factory->weights(), MakeFakeKernelLibrary());
}

}  // namespace

// ---------------------------------------------------------------------------------------------------

int FuzzBlob(const uint8_t* data, size_t size) {
  Init();
  // The input is the whole __tvm_dev_mblob symbol: 8-byte length prefix + payload (+ slack).
  if (size == 0) return 0;  // ReadBlobPrefix(blob, 0, ...) means "size unknown" and reads 8 bytes
  ObjectPtr<FuzzBuffer> buffer = MakeObject<FuzzBuffer>(data, size);
  auto prefix = ReadBlobPrefix(buffer->data(), size, keys::kSymbolDevMblob);
  if (!prefix.ok()) {
    Note("blob", prefix.status());
    return 0;
  }
  FUZZ_CHECK(*prefix <= size - 8, "prefix within the symbol");
  BinaryReader reader(buffer->data() + 8, static_cast<size_t>(*prefix), keys::kSymbolDevMblob, 8,
                      ObjectPtr<Object>(buffer));
  BlobLayout layout;
  StatusOr<std::vector<Module>> loaded = LoadBlobModules(reader, &layout);
  if (!loaded.ok()) {
    Note("blob", loaded.status());
    return 0;
  }
  std::vector<Module> modules = std::move(*loaded);
  // Rebuild the tree as the loader does, with a fake kernel library for "_lib".
  Module lib = MakeFakeKernelLibrary();
  if (layout.lib_index >= 0) modules[static_cast<size_t>(layout.lib_index)] = lib;
  Module root;
  if (!layout.has_import_tree) {
    for (const Module& m : modules) {
      FUZZ_CHECK(m.defined(), "legacy module loaded");
      Status s = lib.Import(m);
      FUZZ_CHECK(s.ok(), s.ToString());
    }
    root = lib;
  } else {
    for (size_t i = 0; i < modules.size(); ++i) {
      FUZZ_CHECK(modules[i].defined(), "module loaded");
      for (uint64_t c : layout.Children(i)) {
        FUZZ_CHECK(c < modules.size(), "validated child index");
        Status s = modules[i].Import(modules[c]);
        FUZZ_CHECK(s.ok(), s.ToString());  // the tree was validated acyclic
      }
    }
    root = modules[0];
  }
  if (auto* factory = dynamic_cast<GraphExecutorFactoryNode*>(root.get())) ExerciseFactory("blob", factory);
  for (const Module& m : modules) {
    for (const std::string& name : m->ListFunctionNames()) (void)m.GetFunction(name);
  }
  return 0;
}

int FuzzFactoryPayload(const uint8_t* data, size_t size) {
  Init();
  ObjectPtr<FuzzBuffer> buffer = MakeObject<FuzzBuffer>(data, size);
  {
    // `sorun inspect`: headers only, no owner.
    BinaryReader reader(buffer->data(), size, "factory payload");
    FactoryPayload payload;
    Status s = ReadFactoryPayload(reader, /*load_tensors=*/false, &payload);
    Note("factory_payload", s);
    if (s.ok()) {
      for (const auto& p : payload.params) {
        FUZZ_CHECK(p.header.data_offset + p.header.data_bytes <= size, "param data inside the payload");
        FUZZ_CHECK(!p.tensor.defined(), "no tensors without load_tensors");
      }
      Note("factory_payload", GraphSpec::Parse(payload.graph_json).status());
    }
  }
  // The blob loader: tensors loaded (zero-copy where aligned), graph validated.
  BinaryReader reader(buffer->data(), size, "factory payload", 0, ObjectPtr<Object>(buffer));
  auto module = LoadGraphExecutorFactory(reader);
  if (!module.ok()) {
    Note("factory_payload", module.status());
    return 0;
  }
  auto* factory = dynamic_cast<GraphExecutorFactoryNode*>(module->get());
  FUZZ_CHECK(factory != nullptr, "the loader returns a factory");
  FUZZ_CHECK(module->Import(MakeFakeKernelLibrary()).ok(), "import");
  ExerciseFactory("factory_payload", factory);
  return 0;
}

int FuzzDevicePayload(const uint8_t* data, size_t size) {
  Init();
  // Every grammar (TVM <= 0.20 legacy, 0.21+ ffi, and the detection the stream loaders use); the
  // registered loader is compared with kDetect, the grammar it reads with.
  for (const PayloadGrammar grammar : {PayloadGrammar::kLegacy, PayloadGrammar::kFfi, PayloadGrammar::kDetect})
    for (const char* kind : {keys::kTypeKeyCuda, keys::kTypeKeyOpenCL}) {
      BinaryReader reader(data, size, std::string(kind) + " payload");
      DeviceModulePayload payload;
      Status s = ReadDeviceModulePayload(reader, kind, &payload, grammar);
      if (!s.ok()) {
        Note("device_payload", s);
        break;  // the same bytes fail the same way for the other kind
      }
      // Round trip: the writer's bytes read back to the same payload.
      BinaryWriter w;
      WriteDeviceModulePayload(payload, &w);
      FUZZ_CHECK(w.size() <= reader.position(), "re-encoding is no longer than the input");
      BinaryReader again(reinterpret_cast<const uint8_t*>(w.bytes().data()), w.size(), "round trip");
      DeviceModulePayload back;
      // The writer writes the grammar the payload was read in (for kDetect, the one detected).
      Status s2 = ReadDeviceModulePayload(again, kind, &back, payload.grammar);
      FUZZ_CHECK(s2.ok() && again.at_end(), s2.ToString());
      FUZZ_CHECK(
          back.fmt == payload.fmt && back.data == payload.data && back.functions.size() == payload.functions.size(),
          "device payload round trip");
      // Launch conventions of every kernel, with plausible launch values.
      for (const auto& [name, info] : payload.functions) {
        FUZZ_CHECK(payload.Find(name) != nullptr, "Find() finds every kernel");
        auto config = LaunchConfig::FromFunctionInfo(name, info);
        FUZZ_CHECK(config.ok(), config.status().ToString());  // validated by the reader
        const int n = config->num_packed_args();
        std::vector<TVMValue> values(static_cast<size_t>(n));
        std::vector<int> codes(static_cast<size_t>(n), kTVMArgInt);
        for (int i = 0; i < n; ++i) values[static_cast<size_t>(i)].v_int64 = i % 3 - 1;
        auto dims = ExtractLaunchDims(name, *config, values.data(), codes.data(), n);
        FUZZ_CHECK(dims.ok(), dims.status().ToString());
        FUZZ_CHECK(!ExtractLaunchDims(name, *config, values.data(), codes.data(), n == 0 ? 1 : n - 1).ok(),
                   "a wrong argument count is refused");
      }
      if (grammar != PayloadGrammar::kDetect) continue;
      // The registered blob loader (cuda: no driver here, so nothing is loaded on a device; opencl:
      // no platform, so nothing is built) and the module's functions.
      BinaryReader loader_reader(data, size, std::string(kind) + " payload");
      auto module = RunBlobLoader(kind, loader_reader);
      if (!module.ok()) {
        Note("device_payload", module.status());
        continue;
      }
      FUZZ_CHECK(loader_reader.position() == reader.position(), "loader consumes exactly the payload");
      for (const auto& kv : payload.functions) FUZZ_CHECK(module->GetFunction(kv.first).defined(), kv.first);
      BinaryWriter saved;
      Status save = (*module)->SaveToBinary(&saved);
      FUZZ_CHECK(save.ok(), save.ToString());
    }
  return 0;
}

int FuzzGraphJson(const uint8_t* data, size_t size) {
  Init();
  std::string_view json(reinterpret_cast<const char*>(data), size);
  auto spec = GraphSpec::Parse(json);
  if (!spec.ok()) {
    Note("graph_json", spec.status());
    return 0;
  }
  // Round trip: what ToJson writes parses to the same graph.
  std::string again = spec->ToJson();
  auto reparsed = GraphSpec::Parse(again);
  FUZZ_CHECK(reparsed.ok(), reparsed.status().ToString() + "\n" + again);
  FUZZ_CHECK(reparsed->ToJson() == again, "ToJson is stable");
  FUZZ_CHECK(reparsed->nodes.size() == spec->nodes.size() && reparsed->num_entries() == spec->num_entries(),
             "round trip keeps the graph");
  for (uint32_t nid = 0; nid < spec->nodes.size(); ++nid) spec->DescribeNode(nid);
  auto graph = std::make_shared<const GraphSpec>(std::move(*spec));
  // Heterogeneous placement: every device type the graph may ask for.
  std::vector<bool> bound(graph->num_entries(), true);
  Note("graph_json", PlanMemory(*graph, {CpuDevice(), DLDevice{kDLCUDA, 0}, DLDevice{kDLOpenCL, 1}}, bound).status());
  PlanAndRun("graph_json", graph, nullptr, MakeFakeKernelLibrary());
  return 0;
}

namespace {

// The small executor params files are loaded into: inputs "data" f32[1,8], "w" f32[4,8], "bias"
// f32[4], "idx" i64[2], "mask" bool[3], "h" f16[2,2].
struct ParamsHarness {
  std::shared_ptr<const GraphSpec> graph;
  std::unique_ptr<GraphExecutor> a;
  std::unique_ptr<GraphExecutor> b;
};

ParamsHarness& Harness() {
  static ParamsHarness* h = [] {
    const char* json = R"({
      "nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "w", "inputs": []},
        {"op": "null", "name": "bias", "inputs": []},
        {"op": "null", "name": "idx", "inputs": []},
        {"op": "null", "name": "mask", "inputs": []},
        {"op": "null", "name": "h", "inputs": []},
        {"op": "tvm_op", "name": "fc", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0]],
         "attrs": {"func_name": "fused_dense", "num_inputs": "6", "num_outputs": "1", "flatten_data": "0"}}
      ],
      "arg_nodes": [0, 1, 2, 3, 4, 5],
      "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7],
      "heads": [[6, 0, 0]],
      "attrs": {
        "dltype": ["list_str", ["float32", "float32", "float32", "int64", "bool", "float16", "float32"]],
        "storage_id": ["list_int", [0, 1, 2, 3, 4, 5, 6]],
        "shape": ["list_shape", [[1, 8], [4, 8], [4], [2], [3], [2, 2], [1, 4]]]
      }
    })";
    auto spec = GraphSpec::Parse(json);
    FUZZ_CHECK(spec.ok(), spec.status().ToString());
    auto graph = std::make_shared<const GraphSpec>(std::move(*spec));
    auto* harness = new ParamsHarness();  // never destroyed
    auto a = GraphExecutor::Create(graph, MakeFakeKernelLibrary(), {CpuDevice()}, nullptr);
    auto b = GraphExecutor::Create(graph, MakeFakeKernelLibrary(), {CpuDevice()}, nullptr);
    FUZZ_CHECK(a.ok() && b.ok(), "params harness executors: " + (a.ok() ? b.status() : a.status()).ToString());
    harness->graph = graph;
    harness->a = std::move(*a);
    harness->b = std::move(*b);
    return harness;
  }();
  return *h;
}

}  // namespace

int FuzzParams(const uint8_t* data, size_t size) {
  Init();
  ObjectPtr<FuzzBuffer> buffer = MakeObject<FuzzBuffer>(data, size);
  {
    BinaryReader reader(buffer->data(), size, "params");
    auto params = ReadParamsDict(reader, /*allow_zero_copy=*/false);
    Note("params", params.status());
    if (params.ok()) {
      // Round trip (aligned and not): the writer's output reads back to the same tensors.
      for (bool align : {false, true}) {
        BinaryWriter w;
        Status s = WriteParamsDict(*params, &w, align);
        FUZZ_CHECK(s.ok(), s.ToString());
        BinaryReader r(reinterpret_cast<const uint8_t*>(w.bytes().data()), w.size(), "round trip");
        auto back = ReadParamsDict(r, false);
        FUZZ_CHECK(back.ok() && r.at_end(), back.status().ToString());
        FUZZ_CHECK(back->size() == params->size(), "params round trip count");
        for (size_t i = 0; i < params->size(); ++i) {
          const Tensor& x = (*params)[i].second;
          const Tensor& y = (*back)[i].second;
          FUZZ_CHECK((*params)[i].first == (*back)[i].first, "params round trip name");
          FUZZ_CHECK(x.dtype() == y.dtype() && x.shape() == y.shape() && x.nbytes() == y.nbytes(),
                     "params round trip tensor");
          FUZZ_CHECK(x.nbytes() == 0 || std::memcmp(x.data(), y.data(), x.nbytes()) == 0, "params round trip data");
        }
      }
    }
  }
  ParamsHarness& h = Harness();
  {
    // The three-file path (CreateExecutorFromFiles): a mapped params file read zero-copy becomes the
    // shared weights of a new executor.
    BinaryReader reader(buffer->data(), size, "params", 0, ObjectPtr<Object>(buffer));
    auto params = ReadParamsDict(reader, /*allow_zero_copy=*/true);
    Note("params", params.status());
    if (params.ok()) {
      auto weights = SharedWeights::Create(std::move(*params));
      Note("params", weights.status());
      if (weights.ok()) {
        auto exec = GraphExecutor::Create(h.graph, MakeFakeKernelLibrary(), {CpuDevice()}, *weights);
        Note("params", exec.status());
        if (exec.ok()) Note("params", (*exec)->Run());
      }
    }
  }
  // load_params / share_params on long-lived executors (b's inputs alias a's after share_params, and
  // load_params on b then copies them out first).
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Note("params", h.a->LoadParams(bytes));
  Note("params", h.b->ShareParams(*h.a, bytes));
  Note("params", h.b->LoadParams(bytes));
  Note("params", h.b->Run());
  return 0;
}

int FuzzNpy(const uint8_t* data, size_t size) {
  Init();
  auto header = ParseNpyHeader(data, size, "fuzz.npy");
  auto tensor = ParseNpy(data, size, "fuzz.npy");
  FUZZ_CHECK(header.ok() == tensor.ok(), "ParseNpyHeader and ParseNpy agree");
  if (!tensor.ok()) {
    Note("npy", tensor.status());
    return 0;
  }
  FUZZ_CHECK(header->data_offset + header->data_size == size, "data fills the file");
  // Round trip: what SerializeNpy writes parses to the same tensor.
  auto bytes = SerializeNpy(*tensor->dl());
  FUZZ_CHECK(bytes.ok(), bytes.status().ToString());
  auto back = ParseNpy(*bytes, "round trip");
  FUZZ_CHECK(back.ok(), back.status().ToString());
  FUZZ_CHECK(back->dtype() == tensor->dtype() && back->shape() == tensor->shape(), "npy round trip");
  FUZZ_CHECK(tensor->nbytes() == 0 || std::memcmp(back->data(), tensor->data(), tensor->nbytes()) == 0,
             "npy round trip data");
  return 0;
}

namespace {

// Parses one module payload without creating anything (the inspect handler).
Status InspectPayload(const std::string& type_key, BinaryReader& reader) {
  if (keys::IsGraphExecutorFactoryTypeKey(type_key)) {
    FactoryPayload payload;
    SORUN_RETURN_IF_ERROR(ReadFactoryPayload(reader, /*load_tensors=*/false, &payload));
    auto spec = GraphSpec::Parse(payload.graph_json);
    if (spec.ok()) {
      std::vector<bool> bound(spec->num_entries(), false);
      Note("elf_inspect", PlanMemory(*spec, {CpuDevice()}, bound).status());
    }
    return Status::Ok();
  }
  if (type_key == keys::kTypeKeyCuda || type_key == keys::kTypeKeyOpenCL) {
    DeviceModulePayload payload;
    return ReadDeviceModulePayload(reader, type_key.c_str(), &payload);
  }
  return Unimplemented("cannot inspect module type '" + type_key + "'");
}

}  // namespace

int FuzzElfInspect(const uint8_t* data, size_t size) {
  Init();
  // The check the loader runs before dlopen (format/elf_preflight.h) reads the same bytes.
  Note("elf_inspect", PreflightSharedLibraryBytes(data, size, "fuzz.so"));
  auto image = ElfImage::Parse(data, size, "fuzz.so");
  if (!image.ok()) {
    Note("elf_inspect", image.status());
    return 0;
  }
  image->MachineName();
  for (const ElfSection& s : image->sections()) FUZZ_CHECK(image->FindSection(s.name) != nullptr, "FindSection");
  // FindSymbolData is linear in the symbol count: look at the first names only.
  std::vector<std::string> names = image->DefinedSymbolNames();
  if (names.size() > 64) names.resize(64);
  for (const std::string& name : names) {
    FUZZ_CHECK(image->HasSymbol(name), "HasSymbol of a defined name");
    auto sym = image->FindSymbolData(name);
    if (sym.ok()) {
      FUZZ_CHECK(sym->file_offset <= size && sym->size <= size - sym->file_offset, "symbol bytes inside the file");
      if (sym->size) g_sink = sym->data[sym->size - 1];
    }
  }
  for (const char* ffi : {keys::kSymbolFfiLibraryBin, keys::kSymbolFfiLibraryBinV22}) image->HasSymbol(ffi);

  auto blob = image->FindSymbolData(keys::kSymbolDevMblob);
  if (!blob.ok()) {
    Note("elf_inspect", blob.status());
    return 0;
  }
  // st_size 0 (size not recorded): the blob may run to the end of the file, no further.
  const uint64_t symbol_size = blob->size != 0 ? blob->size : size - blob->file_offset;
  if (symbol_size == 0) return 0;  // 0 would mean "size unknown" to ReadBlobPrefix
  auto prefix = ReadBlobPrefix(blob->data, symbol_size, "fuzz.so: __tvm_dev_mblob");
  if (!prefix.ok()) {
    Note("elf_inspect", prefix.status());
    return 0;
  }
  if (auto record = image->FindSymbolData(keys::kSymbolBlobChecksum); record.ok() && record->size != 0) {
    Note("elf_inspect", VerifyBlobChecksum(blob->data, 8 + *prefix, record->data, record->size));
  }
  BinaryReader reader(blob->data + 8, static_cast<size_t>(*prefix), "fuzz.so: __tvm_dev_mblob", blob->file_offset + 8);
  BlobLayout layout;
  Status s = ParseModuleBlob(
      reader, [](size_t, const std::string& type_key, BinaryReader& r) { return InspectPayload(type_key, r); },
      &layout);
  Note("elf_inspect", s);
  if (s.ok()) {
    uint64_t total = 0;
    for (size_t i = 0; i < layout.modules.size(); ++i) {
      total += layout.modules[i].payload_size;
      for (uint64_t c : layout.Children(i)) FUZZ_CHECK(c < layout.modules.size(), "child in range");
    }
    FUZZ_CHECK(total <= layout.payload_size, "payload sizes add up");
  }
  return 0;
}

namespace {

void TarOnce(const uint8_t* data, size_t size, const char* name) {
  auto entries = ReadTarArchive(data, size, name);
  if (!entries.ok()) {
    Note("tar", entries.status());
    return;
  }
  TarWriter writer;
  bool rewritable = true;
  for (const TarEntry& e : *entries) {
    FUZZ_CHECK(e.data_offset <= size && e.size <= size - e.data_offset, "entry contents inside the archive");
    FUZZ_CHECK(e.data == data + e.data_offset, "entry data pointer");
    FUZZ_CHECK(!e.name.empty() && e.name[0] != '/', "normalised relative name");
    Xxh64(e.data, static_cast<size_t>(e.size));
    std::string_view contents(reinterpret_cast<const char*>(e.data), static_cast<size_t>(e.size));
    if (!writer.AddFile(e.name, contents, e.mode).ok()) rewritable = false;  // e.g. a pax name > 255 bytes
  }
  if (!rewritable) return;
  // Round trip: a rewritten archive reads back to the same files.
  std::string archive = writer.Finish();
  auto back = ReadTarArchive(reinterpret_cast<const uint8_t*>(archive.data()), archive.size(), "round trip");
  FUZZ_CHECK(back.ok(), back.status().ToString());
  FUZZ_CHECK(back->size() == entries->size(), "tar round trip count");
  for (size_t i = 0; i < back->size(); ++i) {
    const TarEntry& x = (*entries)[i];
    const TarEntry& y = (*back)[i];
    FUZZ_CHECK(x.name == y.name && x.size == y.size && x.mode == y.mode, "tar round trip entry " + x.name);
    FUZZ_CHECK(x.size == 0 || std::memcmp(x.data, y.data, static_cast<size_t>(x.size)) == 0, "tar round trip data");
  }
}

}  // namespace

int FuzzTar(const uint8_t* data, size_t size) {
  Init();
  TarOnce(data, size, "fuzz.tar");
  // Mutated headers almost never keep a valid checksum, which would keep the fuzzer at the first
  // header: run again with the checksum of every block carrying a ustar magic recomputed.
  std::vector<uint8_t> fixed(data, data + size);
  bool changed = false;
  for (size_t off = 0; off + kTarBlockSize <= size; off += kTarBlockSize) {
    uint8_t* block = fixed.data() + off;
    if (std::memcmp(block + 257, "ustar", 5) != 0) continue;
    std::memset(block + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < kTarBlockSize; ++i) sum += block[i];
    for (int i = 5; i >= 0; --i, sum >>= 3) block[148 + i] = static_cast<uint8_t>('0' + (sum & 7));
    block[154] = 0;
    changed = changed || std::memcmp(block + 148, data + off + 148, 8) != 0;
  }
  if (changed) TarOnce(fixed.data(), fixed.size(), "fuzz.tar (checksums fixed)");
  return 0;
}

const std::vector<FuzzTarget>& AllTargets() {
  static const std::vector<FuzzTarget>* targets = new std::vector<FuzzTarget>{
      {"blob_fuzzer", &FuzzBlob},
      {"factory_payload_fuzzer", &FuzzFactoryPayload},
      {"device_payload_fuzzer", &FuzzDevicePayload},
      {"graph_json_fuzzer", &FuzzGraphJson},
      {"params_fuzzer", &FuzzParams},
      {"npy_fuzzer", &FuzzNpy},
      {"elf_inspect_fuzzer", &FuzzElfInspect},
      {"tar_fuzzer", &FuzzTar},
      {"elf_inject_fuzzer", &FuzzElfInject},
      {"model_load_fuzzer", &FuzzModelLoad},
      {"memory_load_fuzzer", &FuzzMemoryLoad},
      {"relax_fuzzer", &FuzzRelax},
      {"relax_vm_fuzzer", &FuzzRelaxVm},
  };
  return *targets;
}

}  // namespace fuzz
}  // namespace sorun
