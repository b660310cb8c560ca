#include "inspect/relax_inspector.h"

#include <optional>
#include <utility>

#include "base/file_checks.h"
#include "format/binary_reader.h"
#include "inspect/blob_inspection.h"
#include "inspect/model_file.h"
#include "relax/export_check.h"
#include "relax/vm_executable.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_extent.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

using relax::BlobGeneration;

// The blob symbol as found in the file.
struct FoundBlob {
  std::string symbol;
  const uint8_t* data = nullptr;  // the length prefix
  uint64_t bytes = 0;             // readable from data on
  std::string section;
  std::string member;
  bool exported = true;  // in the dynamic symbol table (dlsym finds it)
};

const char* kTvmFfiSymbols[] = {keys::kSymbolFfiLibraryBinV22, keys::kSymbolFfiLibraryBin};

// A library's blob: its dynamic symbol (else the static one, reported as not exported), bounded by
// its PT_LOAD segment (the loader's rule). A relocatable member's: bounded by its section.
StatusOr<FoundBlob> LocateSymbol(const ModelFileMember& m, const std::string& name) {
  const ElfImage& image = m.image;
  FoundBlob found;
  found.symbol = name;
  found.member = m.name;
  auto by_section = image.FindSymbolData(name);
  const std::vector<LoadSegment> segments = image.LoadSegments();
  if (segments.empty()) {
    if (!by_section.ok()) return NamePath(std::move(by_section).status(), image.file_name());
    found.data = by_section->data;
    found.bytes = by_section->size;
    found.section = by_section->section;
    return found;
  }
  const ElfSymbol* sym = nullptr;
  for (const ElfSymbol& s : image.dynamic_symbols()) {
    if (s.defined() && s.name == name) sym = &s;
  }
  if (sym == nullptr) {
    found.exported = false;
    sym = image.FindDefinedSymbol(name);
  }
  if (sym == nullptr) return NotFound(image.file_name() + ": no " + name);
  SORUN_ASSIGN_OR_RETURN(SymbolExtent extent, BoundSymbolBytes(name, sym->value, sym->size, segments));
  found.data = extent.data;
  found.bytes = extent.bytes;
  found.section = by_section.ok() ? by_section->section : "PT_LOAD segment " + std::to_string(extent.segment);
  return found;
}

StatusOr<FoundBlob> FindRelaxBlob(const ModelFile& file) {
  if (const ElfSymbolData* blob = file.blob()) {  // TVM 0.16 - 0.20: ModelFile located and bounded it
    FoundBlob found;
    found.symbol = keys::kSymbolDevMblob;
    found.data = blob->data;
    found.bytes = 8 + file.payload_size();
    found.section = blob->section;
    found.member = file.blob_member();
    return found;
  }
  std::optional<FoundBlob> found;
  for (const ModelFileMember& m : file.members()) {
    for (const char* name : kTvmFfiSymbols) {
      if (!m.image.HasSymbol(name)) continue;
      if (found) {
        return DataLoss(file.path() + ": two blob symbols (" + found->symbol + (found->member.empty() ? "" : " in ") +
                        found->member + ", " + name + (m.name.empty() ? "" : " in ") + m.name + ")");
      }
      SORUN_ASSIGN_OR_RETURN(found, LocateSymbol(m, name));
    }
  }
  if (!found) return NotFound(file.path() + ": no Relax blob symbol");
  return *found;
}

// The undefined names of every member (what the library imports).
std::vector<std::string> ImportedNames(const ModelFile& file) {
  std::vector<std::string> out;
  for (const ModelFileMember& m : file.members()) {
    const auto& table =
        file.is_tar() || m.image.dynamic_symbols().empty() ? m.image.static_symbols() : m.image.dynamic_symbols();
    for (const ElfSymbol& s : table) {
      if (!s.defined() && !s.name.empty()) out.emplace_back(s.name);
    }
  }
  return out;
}

const char* FunctionKindName(relax::VmFunctionKind kind) {
  switch (kind) {
    case relax::VmFunctionKind::kPackedFunc: return "packed function";
    case relax::VmFunctionKind::kVmFunc: return "vm function";
    case relax::VmFunctionKind::kVmTirFunc: return "vmtir function";
  }
  return "?";
}

void Summarize(const relax::VmExecutable& exec, RelaxInspection* r) {
  r->magic_v2 = exec.has_scope_section();
  r->version = exec.version;
  r->num_instructions = exec.instructions.size();
  for (const relax::VmFunction& fn : exec.functions) {
    r->functions.push_back(RelaxFunctionSummary{fn.name, FunctionKindName(fn.kind), fn.param_names,
                                                fn.register_file_size, fn.start_instr, fn.end_instr});
  }
  auto inputs = relax::DescribeInputs(exec, "main");
  if (inputs.ok()) {
    r->inputs = std::move(*inputs);
  } else {
    r->inputs_note = inputs.status().message();
  }
  r->num_constants = exec.constants.size();
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    const relax::VmConstant& c = exec.constants[i];
    if (c.kind != relax::VmConstantKind::kTensor) continue;
    r->tensors.push_back(RelaxTensorConstant{i, c.dtype, c.shape, c.data_bytes, c.DataAlignment()});
    r->tensor_bytes += c.data_bytes;
  }
}

}  // namespace

const char* RelaxGenerationVersions(BlobGeneration generation) {
  switch (generation) {
    case BlobGeneration::kLegacyDevMblob: return "TVM 0.16 - 0.20";
    case BlobGeneration::kFfiLegacy021: return "TVM 0.21";
    case BlobGeneration::kFfiTreeFirst: return "TVM 0.22+";
  }
  return "?";
}

bool IsRelaxExportFile(const ModelFile& file) {
  for (const ModelFileMember& m : file.members()) {
    for (const char* name : kTvmFfiSymbols) {
      if (m.image.HasSymbol(name)) return true;
    }
  }
  const ElfSymbolData* blob = file.blob();
  if (blob == nullptr) return false;
  // The legacy layout: u64 count, then the first entry's type key.
  BinaryReader reader(blob->data + 8, static_cast<size_t>(file.payload_size()), keys::kSymbolDevMblob, 8);
  uint64_t count = 0;
  std::string key;
  return reader.ReadU64(&count).ok() && count > 0 && reader.ReadString(&key, "type key").ok() &&
         relax::IsRelaxExecutableTypeKey(key);
}

StatusOr<bool> InspectRelaxExport(const ModelFile& file, bool disassemble, InspectReport* report) {
  SORUN_ASSIGN_OR_RETURN(FoundBlob found, FindRelaxBlob(file));
  SORUN_ASSIGN_OR_RETURN(BlobGeneration generation, relax::BlobGenerationForSymbol(found.symbol));
  // Legacy layouts give device payloads no length: read them here (either FunctionInfo grammar).
  std::vector<InspectedDeviceModule> devices;
  auto blob = relax::ParseLibraryBlob(
      found.data, found.bytes, found.symbol, [&](size_t index, const std::string& key, BinaryReader& r) -> Status {
        if (key != keys::kTypeKeyCuda && key != keys::kTypeKeyOpenCL) {
          return Unimplemented("module " + std::to_string(index) + " '" + key +
                               "': sorun does not know its payload grammar and legacy payloads are not "
                               "length-delimited, so the walk stops here");
        }
        InspectedDeviceModule dev;
        SORUN_RETURN_IF_ERROR(InspectDeviceModule(index, key, r, PayloadGrammar::kDetect, &dev));
        devices.push_back(std::move(dev));
        return Status::Ok();
      });
  if (!blob.ok()) return std::move(blob).status().Annotate(file.path());
  for (size_t i = 0; i < blob->modules.size() && blob->has_import_tree && generation == BlobGeneration::kFfiTreeFirst;
       ++i) {
    const relax::LibraryBlobModule& m = blob->modules[i];
    if (m.type_key != keys::kTypeKeyCuda && m.type_key != keys::kTypeKeyOpenCL) continue;
    BinaryReader r(m.payload, static_cast<size_t>(m.payload_size), found.symbol, m.payload_offset);
    InspectedDeviceModule dev;
    Status s = InspectDeviceModule(i, m.type_key, r, PayloadGrammar::kFfi, &dev);
    if (s.ok() && !r.at_end()) s = r.Error(std::to_string(r.remaining()) + " trailing bytes after the payload");
    if (!s.ok()) return std::move(s).Annotate(file.path() + ": module " + std::to_string(i) + " '" + m.type_key + "'");
    devices.push_back(std::move(dev));
  }
  auto root = relax::RootExecutable(*blob);
  if (!root.ok()) return false;  // a tvm-ffi container of something else (e.g. a TIR-only build)
  const relax::LibraryBlobModule& root_module = **root;
  auto exec =
      relax::ParseVmExecutable(root_module.payload, root_module.payload_size,
                               relax::UsesFfiConstantTags(generation) ? relax::ConstantTagDialect::kFfiTypeIndex
                                                                      : relax::ConstantTagDialect::kLegacyEnum,
                               found.symbol + " module 0 '" + root_module.type_key + "'", root_module.payload_offset);
  if (!exec.ok()) return std::move(exec).status().Annotate(file.path());

  report->kind = ArtifactKind::kRelaxExport;
  report->blob_section = found.section;
  report->blob_member = found.member;
  report->blob_bytes = 8 + blob->payload_size;
  report->has_import_tree = blob->has_import_tree;
  for (size_t i = 0; i < blob->modules.size(); ++i) {
    const relax::LibraryBlobModule& m = blob->modules[i];
    report->modules.push_back(InspectedModule{i, m.type_key, blob->Children(i), m.key_offset, m.payload_size});
  }
  report->device_modules = std::move(devices);
  InspectChecksum(file, found.data, 8 + blob->payload_size, &report->checksum);

  RelaxInspection r;
  r.symbol = found.symbol;
  r.generation = generation;
  r.tvm_versions = RelaxGenerationVersions(generation);
  r.root_type_key = root_module.type_key;
  Summarize(*exec, &r);
  r.outputs = relax::DescribeOutputs(*exec, exec->FindFunction("main"));
  r.dtype_codes = exec->dtype_codes;
  const relax::RelaxLibraryFacts facts =
      relax::RelaxLibraryFactsFromSymbols(generation, file.host_functions(), ImportedNames(file));
  r.system_lib = facts.system_lib;
  r.callees = relax::ClassifyFunctions(*exec, facts.is_kernel);
  r.refusals = relax::RelaxExportRefusals(*blob, *exec, facts);
  for (const InspectedDeviceModule& dev : report->device_modules) {  // what the device loaders refuse
    if (dev.type_key != keys::kTypeKeyCuda) continue;
    Status s = CheckCudaCodeFormat(dev.fmt, dev.code_bytes);
    if (!s.ok()) r.refusals.push_back("module " + std::to_string(dev.module_index) + " ('cuda'): " + s.message());
  }
  if (!found.exported && !facts.system_lib) {
    r.refusals.insert(r.refusals.begin(), found.symbol + " is not a dynamic symbol: the loader cannot find it");
  }
  if (disassemble) r.disassembly = relax::Disassemble(*exec, facts.is_kernel);
  report->relax = std::move(r);
  return true;
}

}  // namespace sorun
