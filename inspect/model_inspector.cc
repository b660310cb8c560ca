#include "inspect/model_inspector.h"

#include <algorithm>
#include <map>
#include <set>

#include "backends/device_module_payload.h"
#include "base/file_checks.h"
#include "format/binary_reader.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/shared_weights.h"
#include "inspect/blob_inspection.h"
#include "inspect/model_file.h"
#include "inspect/relax_inspector.h"
#include "runtime/data_type.h"
#include "runtime/device_module_kind.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor_io.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

std::string ElfTypeName(uint16_t type) {
  switch (type) {
    case ET_DYN: return "shared object";
    case ET_REL: return "relocatable object";
    case ET_EXEC: return "executable";
    default: return "ELF type " + std::to_string(type);
  }
}

InspectedTensor TensorFrom(const std::string& name, const NDArrayHeader& h, bool is_param) {
  return InspectedTensor{name, h.shape, h.dtype, h.data_bytes, is_param};
}

// "[0] GraphExecutorFactory, [1] _lib" for messages about a walk that stopped.
std::string DescribeReadSoFar(const BlobLayout& layout) {
  if (layout.modules.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < layout.modules.size(); ++i) {
    s += (i ? ", " : "") + std::string("[") + std::to_string(i) + "] " + layout.modules[i].type_key;
  }
  return s;
}

// What the memory plan needs; planned after the walk, once the device modules are known.
struct PlanInput {
  GraphSpec spec;
  std::vector<bool> bound;
};

Status InspectFactory(size_t index, const std::string& type_key, BinaryReader& reader, InspectedGraph* out,
                      PlanInput* plan_input) {
  FactoryPayload payload;
  SORUN_RETURN_IF_ERROR(ReadFactoryPayload(reader, /*load_tensors=*/false, &payload));
  auto spec = GraphSpec::Parse(payload.graph_json);
  if (!spec.ok()) return std::move(spec).status().Annotate(type_key + ": graph JSON");
  const GraphSpec& g = *spec;
  out->module_index = index;
  out->type_key = type_key;
  out->module_name = payload.module_name;
  out->graph_json_bytes = payload.graph_json.size();
  out->num_nodes = g.nodes.size();
  out->num_entries = g.num_entries();
  out->pad_count = payload.pad_count;

  std::set<std::string> param_names;
  std::vector<ParamSignature> signatures;
  for (const FactoryPayload::Param& p : payload.params) {
    param_names.insert(p.name);
    signatures.push_back(ParamSignature{p.name, p.header.dtype, &p.header.shape});
    out->params.push_back(TensorFrom(p.name, p.header, true));
    out->param_bytes += p.header.data_bytes;
  }
  // The loader's rule (graph_executor/shared_weights.h), on the headers: a pack that passes here loads.
  SORUN_RETURN_IF_ERROR(CheckParamsAgainstGraph(g, signatures, ParamsOutsideGraph::kIgnored, type_key));
  std::set<std::string> input_names;
  std::vector<bool> bound(g.num_entries(), false);
  for (uint32_t nid : g.arg_nodes) {
    const std::string& name = g.nodes[nid].name;
    input_names.insert(name);
    uint32_t eid = g.entry_id(nid, 0);
    InspectedTensor t{name, g.shape[eid], g.dltype[eid], g.EntryBytes(eid), false};
    if (param_names.count(name)) {
      t.is_param = true;
      bound[eid] = true;
    }
    out->inputs.push_back(std::move(t));
  }
  for (const FactoryPayload::Param& p : payload.params) {
    if (!input_names.count(p.name)) out->unused_params.push_back(p.name);
  }
  for (size_t i = 0; i < g.heads.size(); ++i) {
    uint32_t eid = g.entry_id(g.heads[i]);
    std::string name = g.nodes[g.heads[i].node_id].name;
    if (g.nodes[g.heads[i].node_id].num_outputs > 1) name += ":" + std::to_string(g.heads[i].index);
    out->outputs.push_back(InspectedTensor{name, g.shape[eid], g.dltype[eid], g.EntryBytes(eid), false});
  }
  std::map<std::string, std::string> kernels;  // func_name -> first node calling it
  for (size_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& n = g.nodes[nid];
    if (n.is_input()) continue;
    ++out->num_op_nodes;
    if (n.func_name != "__nop" && n.func_name != "__copy") kernels.emplace(n.func_name, g.DescribeNode(nid));
  }
  for (const auto& [kernel, node] : kernels) {
    out->kernels.push_back(kernel);
    out->kernel_callers.push_back(node);
  }

  for (int32_t type : g.device_index) {
    if (std::find(out->device_types.begin(), out->device_types.end(), type) == out->device_types.end()) {
      out->device_types.push_back(type);
    }
  }
  plan_input->bound = std::move(bound);
  plan_input->spec = std::move(*spec);
  return Status::Ok();
}

// const_loader (v0.9+) / metadata (v0.8): vector<string> names; u64 n; n NDArrays; vector<string>
// symbols; u64 m; m x vector<string> (docs/spec/FORMAT.md 7.4).
Status InspectConstants(size_t index, const std::string& type_key, BinaryReader& reader, InspectedConstants* out) {
  out->module_index = index;
  out->type_key = type_key;
  std::vector<std::string> names;
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&names, "constant names"), type_key);
  uint64_t n = 0;
  const uint64_t n_at = reader.offset();
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&n), type_key + ": constant count");
  if (n != names.size()) {
    return reader.ErrorAt(n_at, type_key + ": constant count " + std::to_string(n) + " does not match " +
                                    std::to_string(names.size()) + " names");
  }
  for (const std::string& name : names) {
    NDArrayHeader h;
    Status s = ReadNDArrayHeader(reader, &h);
    if (!s.ok()) return std::move(s).Annotate(type_key + ": constant '" + name + "'");
    out->constants.push_back(TensorFrom(name, h, false));
  }
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&out->symbols, "symbols"), type_key);
  uint64_t m = 0;
  const uint64_t m_at = reader.offset();
  SORUN_RETURN_IF_ERROR_CTX(reader.ReadU64(&m), type_key + ": symbol count");
  if (m != out->symbols.size()) {
    return reader.ErrorAt(m_at, type_key + ": symbol count " + std::to_string(m) + " does not match " +
                                    std::to_string(out->symbols.size()) + " symbols");
  }
  for (uint64_t i = 0; i < m; ++i) {
    std::vector<std::string> vars;
    SORUN_RETURN_IF_ERROR_CTX(reader.ReadStringVector(&vars, "constant names of a symbol"), type_key);
  }
  return Status::Ok();
}

// One device per device type the graph names (id 0); without device_index the default device the
// model needs: the device modules' type when they all share one, else cpu:0.
Status PlanGraphMemory(const PlanInput& input, const std::vector<InspectedDeviceModule>& device_modules,
                       InspectedGraph* graph) {
  std::vector<DLDevice> devices;
  for (int type : graph->device_types) {
    auto device = MakeDevice(type, 0);  // an integer from the file: checked before it becomes a device
    if (!device.ok()) return std::move(device).status().Annotate("graph device_index");
    devices.push_back(*device);
  }
  if (!devices.empty()) {
    graph->plan_basis = "one device per device type of the graph";
  } else {
    std::set<std::string> kinds;
    for (const InspectedDeviceModule& d : device_modules) kinds.insert(d.type_key);
    DLDevice device = CpuDevice();
    if (kinds.size() == 1) device = DLDevice{DeviceTypeOfModule(*kinds.begin()).value_or(kDLCPU), 0};
    devices.push_back(device);
    graph->plan_basis = "default device " + DeviceToString(device) +
                        (kinds.size() == 1 ? ", from the model's " + *kinds.begin() + " device code" : "");
  }
  auto plan = PlanMemory(input.spec, devices, input.bound);
  if (!plan.ok()) return std::move(plan).status().Annotate(graph->type_key + ": memory plan");
  graph->memory = plan->devices;
  return Status::Ok();
}

// The device types the model needs, from every module of its blob (the runtime's rule).
void RecordDevicesNeeded(InspectReport* report) {
  std::vector<std::string_view> type_keys;
  for (const InspectedModule& m : report->modules) type_keys.emplace_back(m.type_key);
  report->devices_needed = DeviceTypesOfModules(type_keys);
}

}  // namespace

StatusOr<InspectReport> InspectModelFile(const std::string& path, const InspectOptions& options) {
  SORUN_RETURN_IF_ERROR(CheckRegularFile(path, "model"));
  auto opened = ModelFile::Open(path);
  if (!opened.ok()) return NamePath(std::move(opened).status(), path);
  const ModelFile& file = *opened;
  InspectReport report;
  report.path = path;
  report.is_tar = file.is_tar();
  report.file_bytes = file.file_size();
  const ElfImage& first = file.members().front().image;
  report.elf_type = ElfTypeName(first.type());
  report.machine = first.MachineName();
  report.ffi_symbols = file.ffi_symbols();
  report.host_functions = file.host_functions();

  if (IsRelaxExportFile(file)) {
    SORUN_ASSIGN_OR_RETURN(bool is_relax, InspectRelaxExport(file, options.disassemble, &report));
    if (is_relax) {
      RecordDevicesNeeded(&report);
      return report;
    }
  }
  const ElfSymbolData* blob = file.blob();
  if (blob == nullptr) {
    report.kind = report.ffi_symbols.empty() ? ArtifactKind::kKernelLibrary : ArtifactKind::kTvmFfi;
    return report;
  }
  report.kind = ArtifactKind::kPackedModel;
  report.blob_section = blob->section;
  report.blob_member = file.blob_member();
  report.blob_bytes = 8 + file.payload_size();
  InspectChecksum(file, file.blob() ? file.blob()->data : nullptr, 8 + file.payload_size(), &report.checksum);

  const std::string section = keys::kSymbolDevMblob;
  BinaryReader reader(blob->data + 8, static_cast<size_t>(file.payload_size()), section, /*base_offset=*/8);
  BlobLayout layout;
  PlanInput plan_input;
  Status walked = ParseModuleBlob(
      reader,
      [&](size_t index, const std::string& key, BinaryReader& r) -> Status {
        if (keys::IsGraphExecutorFactoryTypeKey(key)) {
          InspectedGraph graph;
          PlanInput input;
          SORUN_RETURN_IF_ERROR(InspectFactory(index, key, r, &graph, &input));
          if (!report.graph) {
            report.graph = std::move(graph);
            plan_input = std::move(input);
          }
          return Status::Ok();
        }
        if (key == keys::kTypeKeyCuda || key == keys::kTypeKeyOpenCL) {
          InspectedDeviceModule dev;
          SORUN_RETURN_IF_ERROR(InspectDeviceModule(index, key, r, PayloadGrammar::kLegacy, &dev));
          report.device_modules.push_back(std::move(dev));
          return Status::Ok();
        }
        if (key == keys::kTypeKeyConstLoader || key == keys::kTypeKeyLegacyMetadata) {
          InspectedConstants consts;
          SORUN_RETURN_IF_ERROR(InspectConstants(index, key, r, &consts));
          report.constant_modules.push_back(std::move(consts));
          return Status::Ok();
        }
        if (key == keys::kTypeKeyMetadataModule) return Status::Ok();
        return Unimplemented("unknown module type key '" + key +
                             "': sorun does not know its payload grammar and payloads are not length-delimited, "
                             "so the walk stops here (modules read so far: " +
                             DescribeReadSoFar(layout) + ")");
      },
      &layout);
  if (!walked.ok()) return std::move(walked).Annotate(path + ": " + section);
  report.has_import_tree = layout.has_import_tree;
  for (size_t i = 0; i < layout.modules.size(); ++i) {
    const BlobModuleEntry& e = layout.modules[i];
    report.modules.push_back(InspectedModule{i, e.type_key, layout.Children(i), e.key_offset, e.payload_size});
  }
  if (report.graph) {
    Status planned = PlanGraphMemory(plan_input, report.device_modules, &*report.graph);
    if (!planned.ok()) return std::move(planned).Annotate(path);
  }
  RecordDevicesNeeded(&report);
  return report;
}

}  // namespace sorun
