#include "tools/cli/inspect_command.h"

#include <algorithm>
#include <set>

#include "base/file_checks.h"
#include "graph_executor/memory_plan.h"
#include "runtime/data_type.h"
#include "tools/cli/flags.h"
#include "tools/cli/json_util.h"
#include "tools/cli/memory_plan_json.h"
#include "tools/cli/model_protection.h"
#include "tools/cli/relax_report.h"
#include "tools/cli/text_table.h"

namespace sorun {
namespace cli {
namespace {

const std::vector<FlagSpec>& InspectFlags() {
  static const std::vector<FlagSpec> specs = [] {
    std::vector<FlagSpec> v = {
        {"--json", "", false, false, "", "print one JSON object instead of text"},
        {"--disassemble", "", false, false, "", "Relax VM exports: also print the executable's bytecode"},
    };
    for (FlagSpec& f : ProtectionFlagSpecs()) v.push_back(std::move(f));
    return v;
  }();
  return specs;
}

std::string Shape(const std::vector<int64_t>& shape) {
  return ShapeToString(shape.data(), static_cast<int>(shape.size()));
}

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string Bytes(uint64_t n) {
  std::string exact = std::to_string(n) + " B";
  std::string human = FormatBytes(n);
  return human == exact ? exact : human + " (" + exact + ")";
}

// Graph kernels the file does not export (only meaningful when the file exports functions at all).
std::vector<std::string> MissingKernels(const InspectReport& r) {
  std::vector<std::string> missing;
  if (!r.graph) return missing;
  std::set<std::string> exported(r.host_functions.begin(), r.host_functions.end());
  for (const std::string& k : r.graph->kernels) {
    if (!exported.count(k)) missing.push_back(k);
  }
  return missing;
}

// Wraps `items` into lines of at most ~100 characters, each starting with `indent`.
std::string Wrap(const std::vector<std::string>& items, const std::string& indent) {
  std::string out, line;
  for (size_t i = 0; i < items.size(); ++i) {
    std::string piece = items[i] + (i + 1 < items.size() ? "," : "");
    if (!line.empty() && line.size() + 1 + piece.size() > 100) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + piece;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

void WriteTensors(JsonWriter& w, const std::vector<InspectedTensor>& tensors, bool skip_params) {
  w.StartArray();
  for (const InspectedTensor& t : tensors) {
    if (skip_params && t.is_param) continue;
    w.StartObject();
    w.Key("name");
    WriteJsonString(w, t.name);
    w.Key("shape");
    WriteJsonShape(w, t.shape);
    w.Key("dtype");
    WriteJsonString(w, DTypeToString(t.dtype));
    w.Key("bytes");
    w.Uint64(t.bytes);
    w.EndObject();
  }
  w.EndArray();
}

// main's inputs of a Relax export as tensors: dims -1 where not static (bytes 0 then), dtype float32
// when unknown (the "relax" object says what is known).
std::vector<InspectedTensor> RelaxInputTensors(const RelaxInspection& relax) {
  std::vector<InspectedTensor> out;
  for (const relax::VmInputInfo& in : relax.inputs) {
    InspectedTensor t;
    t.name = in.name;
    t.shape = in.dims;
    t.dtype = in.dtype;
    bool is_static = !in.dims.empty() || in.ndim == 0;
    uint64_t elements = 1;
    for (int64_t d : in.dims) {
      if (d < 0) is_static = false;
      elements *= d < 0 ? 0 : static_cast<uint64_t>(d);
    }
    t.bytes = is_static && in.has_dtype ? elements * ((in.dtype.bits * in.dtype.lanes + 7u) / 8u) : 0;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::string InspectUsage() {
  return "Usage: sorun inspect MODEL [--json] [--disassemble] [--key KEYFILE] [--public-key PUB.pem]\n"
         "\n"
         "Shows what a model library (.so, or a .tar export) holds, reading its bytes only: the library is\n"
         "never loaded or executed. Reports the blob layout, the module tree, the graph's inputs, outputs\n"
         "and parameters, a memory plan, the device modules' kernels, the integrity record, and the devices\n"
         "the model needs (cpu, or the type of its CUDA / OpenCL module, which `run --device` must name).\n"
         "For a Relax VM export (TVM 0.16 - 0.27): the executable's functions, main's inputs, the constants\n"
         "and their alignment, every called function classified, and whether sorun can run it.\n"
         "--key reads a model written by `pack --encrypt` (decrypted in memory, never to a file);\n"
         "--public-key first checks its signature (`pack --sign`).\n"
         "\n" +
         FormatFlagHelp(InspectFlags());
}

std::string InspectReportToText(const InspectReport& r) {
  std::string out;
  std::string what = r.kind == ArtifactKind::kPackedModel
                         ? (r.graph ? "packed model" : "kernel library with a module blob")
                     : r.kind == ArtifactKind::kKernelLibrary ? "kernel library"
                     : r.kind == ArtifactKind::kRelaxExport   ? "Relax VM export"
                                                              : "TVM v0.21+ (tvm-ffi) artifact";
  out += r.path + ": " + what + " (" +
         (r.is_tar ? "tar archive of " + r.machine + " objects" : r.machine + " " + r.elf_type) + ", " +
         FormatBytes(r.file_bytes) + ")\n";
  if (r.kind == ArtifactKind::kKernelLibrary) {
    out +=
        "  no __tvm_dev_mblob: a plain kernel library without graph, parameters or device modules\n"
        "  (the library of a three-file deployment: run it with --graph G.json [--params P.params])\n";
  } else if (r.kind == ArtifactKind::kTvmFfi) {
    out += "  built by TVM v0.21 or later (tvm-ffi ABI: " + Join(r.ffi_symbols, ", ") +
           "); sorun loads the legacy ABI of TVM v0.8 - v0.20 only\n";
  }
  if (r.relax) {
    std::string where = r.blob_member.empty() ? r.blob_section : r.blob_member + " " + r.blob_section;
    out += "  blob      " + r.relax->symbol + " in " + where + ", " + Bytes(r.blob_bytes) + ", " +
           r.relax->tvm_versions + " container\n";
  }
  if (r.kind == ArtifactKind::kPackedModel) {
    TextTable head;
    std::string where = r.blob_member.empty() ? r.blob_section : r.blob_member + " " + r.blob_section;
    head.AddRow({"blob", "__tvm_dev_mblob in " + where + ", " + Bytes(r.blob_bytes) + ", " + r.format() + " layout"});
    std::string ck;
    if (!r.checksum.present) {
      ck = "none (no __sorun_blob_checksum record; e.g. exported by TVM)";
    } else if (r.checksum.valid) {
      ck = "__sorun_blob_checksum present, xxh64 " + r.checksum.hash + ", matches the blob";
    } else {
      ck = "__sorun_blob_checksum present, DOES NOT MATCH: " + r.checksum.error;
    }
    head.AddRow({"checksum", ck});
    out += head.Render();
  }
  if (r.kind == ArtifactKind::kPackedModel || r.relax) {
    out += "\nmodules\n";
    TextTable mods("  ");
    mods.AlignRight(0);
    mods.AlignRight(2);
    mods.AddRow({"index", "type_key", "payload", "imports", ""});
    for (const InspectedModule& m : r.modules) {
      std::vector<std::string> kids;
      for (uint64_t c : m.children) kids.push_back(std::to_string(c));
      std::string note;
      if (m.type_key == "_lib") note = "the kernel library (this file's code)";
      if (r.relax && m.index == 0) note = "the Relax VM executable";
      mods.AddRow({std::to_string(m.index), m.type_key, m.type_key == "_lib" ? "-" : FormatBytes(m.payload_bytes),
                   kids.empty() ? "-" : Join(kids, ","), note});
    }
    out += mods.Render();
    if (!r.has_import_tree) out += "  (legacy layout: every module is an import of the kernel library)\n";
  }
  if (r.relax) out += RelaxInspectionToText(*r.relax);

  if (r.graph) {
    const InspectedGraph& g = *r.graph;
    out += "\ngraph (module " + std::to_string(g.module_index) + ", " + g.type_key + " '" + g.module_name + "')\n";
    size_t num_inputs = g.inputs.size();
    out += "  " + std::to_string(g.num_nodes) + " nodes (" + std::to_string(num_inputs) + " inputs, " +
           std::to_string(g.num_op_nodes) + (g.num_op_nodes == 1 ? " operator), " : " operators), ") +
           std::to_string(g.num_entries) + " entries, graph JSON " + FormatBytes(g.graph_json_bytes) + "\n";
    out += "  inputs\n";
    TextTable in("    ");
    for (const InspectedTensor& t : g.inputs) {
      in.AddRow({t.name, DTypeToString(t.dtype), Shape(t.shape), t.is_param ? "param" : ""});
    }
    out += in.Render();
    out += "  outputs\n";
    TextTable outs("    ");
    for (const InspectedTensor& t : g.outputs) outs.AddRow({t.name, DTypeToString(t.dtype), Shape(t.shape)});
    out += outs.Render();
    out += "  params   " + std::to_string(g.params.size()) + " tensors, " + Bytes(g.param_bytes);
    if (g.pad_count) out += "; " + std::to_string(g.pad_count) + " alignment pads (__sorun_pad_*) not counted";
    out += "\n";
    if (!g.unused_params.empty()) {
      out += "  unused params (no graph input of that name): " + Join(g.unused_params, ", ") + "\n";
    }
    std::vector<std::string> missing = MissingKernels(r);
    std::vector<std::string> ks;
    for (const std::string& k : g.kernels) {
      ks.push_back(std::find(missing.begin(), missing.end(), k) != missing.end() ? k + " (NOT EXPORTED)" : k);
    }
    out += "  kernels  " + (ks.empty() ? std::string("none") : Join(ks, ", ")) + "\n";

    out += "\nmemory plan (" + g.plan_basis + ", parameters bound)\n";
    TextTable mem("  ");
    mem.AlignRight(2);
    mem.AlignRight(4);
    uint64_t total_w = 0, total_a = 0;
    for (const DeviceMemory& d : g.memory) {
      mem.AddRow({DeviceToString(d.device), "params", FormatBytes(d.weight_bytes), "activations",
                  FormatBytes(d.activation_bytes)});
      total_w += d.weight_bytes;
      total_a += d.activation_bytes;
    }
    if (g.memory.size() > 1) mem.AddRow({"total", "params", FormatBytes(total_w), "activations", FormatBytes(total_a)});
    out += mem.Render();
  }

  if (!r.device_modules.empty()) {
    out += "\ndevice modules\n";
    for (const InspectedDeviceModule& d : r.device_modules) {
      out += "  [" + std::to_string(d.module_index) + "] " + d.type_key + ": fmt " + d.fmt + ", " +
             FormatBytes(d.code_bytes) + " of code, " + std::to_string(d.kernels.size()) + " kernel" +
             (d.kernels.size() == 1 ? "" : "s") + "\n";
      TextTable k("      ");
      for (const InspectedKernel& kernel : d.kernels) {
        k.AddRow({kernel.name, "(" + Join(kernel.arg_types, ", ") + ")",
                  kernel.launch_param_tags.empty() ? "" : "launch " + Join(kernel.launch_param_tags, ", ")});
      }
      out += k.Render();
    }
  }
  for (const InspectedConstants& c : r.constant_modules) {
    out += "\nconstants (module " + std::to_string(c.module_index) + ", " + c.type_key +
           "): " + std::to_string(c.constants.size()) + " tensors, symbols " + Join(c.symbols, ", ") + "\n";
  }

  const std::string devices = "devices needed: " + r.DescribeDevicesNeeded() + "\n";
  if (r.relax) {  // its kernels are listed with the called functions
    out += RelaxVerdictToText(*r.relax) + devices;
    if (!r.relax->disassembly.empty()) out += "\ndisassembly\n" + r.relax->disassembly;
    return out;
  }
  if (r.kind == ArtifactKind::kPackedModel) out += "\n" + devices;
  if (!r.host_functions.empty()) {
    out += "\nexported functions (" + std::to_string(r.host_functions.size()) + ")\n";
    out += Wrap(r.host_functions, "  ");
  }
  return out;
}

std::string InspectReportToJson(const InspectReport& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("file");
  WriteJsonString(w, r.path);
  w.Key("file_bytes");
  w.Uint64(r.file_bytes);
  w.Key("kind");
  w.String(ArtifactKindName(r.kind));
  w.Key("container");
  w.String(r.is_tar ? "tar" : "elf");
  w.Key("elf_type");
  WriteJsonString(w, r.elf_type);
  w.Key("machine");
  WriteJsonString(w, r.machine);
  w.Key("format");
  WriteJsonString(w, r.format());
  if (r.kind == ArtifactKind::kPackedModel || r.relax) {
    w.Key("blob");
    w.StartObject();
    w.Key("symbol");
    w.String(r.relax ? r.relax->symbol.c_str() : "__tvm_dev_mblob");
    w.Key("section");
    WriteJsonString(w, r.blob_section);
    if (!r.blob_member.empty()) {
      w.Key("member");
      WriteJsonString(w, r.blob_member);
    }
    w.Key("bytes");
    w.Uint64(r.blob_bytes);
    w.EndObject();
  }
  w.Key("modules");
  w.StartArray();
  for (const InspectedModule& m : r.modules) {
    w.StartObject();
    w.Key("index");
    w.Uint64(m.index);
    w.Key("type_key");
    WriteJsonString(w, m.type_key);
    w.Key("children");
    WriteJsonU64s(w, m.children);
    w.Key("payload_bytes");
    w.Uint64(m.payload_bytes);
    w.EndObject();
  }
  w.EndArray();
  if (!r.has_import_tree && !r.modules.empty()) {
    // The legacy layout's tree, as the text view describes it: the kernel library (not a blob entry)
    // is the root and imports every module of the blob.
    w.Key("legacy_root");
    w.StartObject();
    w.Key("type_key");
    WriteJsonString(w, "_lib");
    w.Key("children");
    std::vector<uint64_t> all;
    for (const InspectedModule& m : r.modules) all.push_back(m.index);
    WriteJsonU64s(w, all);
    w.EndObject();
  }

  w.Key("graph");
  if (!r.graph) {
    w.Null();
  } else {
    const InspectedGraph& g = *r.graph;
    w.StartObject();
    w.Key("module_index");
    w.Uint64(g.module_index);
    w.Key("type_key");
    WriteJsonString(w, g.type_key);
    w.Key("module_name");
    WriteJsonString(w, g.module_name);
    w.Key("nodes");
    w.Uint64(g.num_nodes);
    w.Key("op_nodes");
    w.Uint64(g.num_op_nodes);
    w.Key("entries");
    w.Uint64(g.num_entries);
    w.Key("graph_json_bytes");
    w.Uint64(g.graph_json_bytes);
    w.Key("kernels");
    WriteJsonStrings(w, g.kernels);
    w.Key("missing_kernels");
    WriteJsonStrings(w, MissingKernels(r));
    w.Key("memory_plan_basis");
    WriteJsonString(w, g.plan_basis);
    w.EndObject();
  }
  // Inputs exclude parameters; params are summarised (and listed) separately.
  w.Key("inputs");
  if (r.graph) {
    WriteTensors(w, r.graph->inputs, /*skip_params=*/true);
  } else if (r.relax) {  // main's parameters; "relax.inputs" has ndim and whether the dtype is known
    WriteTensors(w, RelaxInputTensors(*r.relax), false);
  } else {
    w.StartArray();
    w.EndArray();
  }
  w.Key("outputs");
  if (r.graph) {
    WriteTensors(w, r.graph->outputs, false);
  } else if (r.relax) {  // main's return value flattened, dims -1 where computed at run time
    std::vector<InspectedTensor> outputs;
    for (const TensorInfo& o : r.relax->outputs) {
      InspectedTensor t;
      t.name = o.name;
      t.shape = o.shape;
      t.dtype = o.dtype;
      uint64_t elements = 1;
      for (int64_t d : o.shape) elements *= d < 0 ? 0 : static_cast<uint64_t>(d);
      t.bytes = elements * ((o.dtype.bits * o.dtype.lanes + 7u) / 8u);
      outputs.push_back(std::move(t));
    }
    WriteTensors(w, outputs, false);
  } else {
    w.StartArray();
    w.EndArray();
  }
  w.Key("params");
  w.StartObject();
  w.Key("count");
  w.Uint64(r.graph ? r.graph->params.size() : 0);
  w.Key("bytes");
  w.Uint64(r.graph ? r.graph->param_bytes : 0);
  w.Key("alignment_pads");
  w.Uint64(r.graph ? r.graph->pad_count : 0);
  w.Key("unused");
  WriteJsonStrings(w, r.graph ? r.graph->unused_params : std::vector<std::string>());
  w.Key("tensors");
  if (r.graph) {
    WriteTensors(w, r.graph->params, false);
  } else {
    w.StartArray();
    w.EndArray();
  }
  w.EndObject();

  w.Key("memory_plan");
  WriteJsonMemoryPlan(w, r.graph ? r.graph->memory : std::vector<DeviceMemory>{}, /*with_workspace=*/false);

  w.Key("device_modules");
  w.StartArray();
  for (const InspectedDeviceModule& d : r.device_modules) {
    w.StartObject();
    w.Key("index");
    w.Uint64(d.module_index);
    w.Key("type_key");
    WriteJsonString(w, d.type_key);
    w.Key("fmt");
    WriteJsonString(w, d.fmt);
    w.Key("code_bytes");
    w.Uint64(d.code_bytes);
    w.Key("kernels");
    w.StartArray();
    for (const InspectedKernel& k : d.kernels) {
      w.StartObject();
      w.Key("name");
      WriteJsonString(w, k.name);
      w.Key("arg_types");
      WriteJsonStrings(w, k.arg_types);
      w.Key("launch_param_tags");
      WriteJsonStrings(w, k.launch_param_tags);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  w.Key("constant_modules");
  w.StartArray();
  for (const InspectedConstants& c : r.constant_modules) {
    w.StartObject();
    w.Key("index");
    w.Uint64(c.module_index);
    w.Key("type_key");
    WriteJsonString(w, c.type_key);
    w.Key("constants");
    WriteTensors(w, c.constants, false);
    w.Key("symbols");
    WriteJsonStrings(w, c.symbols);
    w.EndObject();
  }
  w.EndArray();

  w.Key("checksum");
  w.StartObject();
  w.Key("present");
  w.Bool(r.checksum.present);
  if (r.checksum.present) {
    w.Key("algorithm");
    w.String("xxh64");
    w.Key("hash");
    WriteJsonString(w, r.checksum.hash);
    w.Key("covers_bytes");
    w.Uint64(r.checksum.blob_bytes);
    w.Key("valid");
    w.Bool(r.checksum.valid);
    if (!r.checksum.valid) {
      w.Key("error");
      WriteJsonString(w, r.checksum.error);
    }
  }
  w.EndObject();

  w.Key("devices_needed");  // device type names: ["cpu"] without a device module
  std::vector<std::string> devices_needed;
  for (DLDeviceType type : r.devices_needed) devices_needed.emplace_back(DeviceTypeName(type));
  WriteJsonStrings(w, devices_needed);
  if (r.relax) {
    w.Key("relax");
    WriteRelaxInspectionJson(w, *r.relax);
  }
  w.Key("ffi_symbols");
  WriteJsonStrings(w, r.ffi_symbols);
  w.Key("host_functions");
  WriteJsonStrings(w, r.host_functions);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

int RunInspectCommand(const std::vector<std::string>& args, CommandIo& io) {
  auto flags = ParseFlags(args, InspectFlags());
  if (!flags.ok()) return UsageError(io, "inspect: " + flags.status().message());
  const auto& pos = flags->positionals();
  if (pos.empty()) {
    return UsageError(io, "inspect: missing MODEL (usage: sorun inspect MODEL [--json] [--disassemble])");
  }
  if (pos.size() > 1) return UsageError(io, "inspect: unexpected argument '" + pos[1] + "' (one MODEL only)");
  InspectOptions options;
  options.disassemble = flags->Has("--disassemble");
  auto protection = ReadProtectionFlags(*flags);
  if (!protection.ok()) return UsageError(io, "inspect: " + protection.status().message());
  auto bytes = ProtectedModelBytes::Open(pos[0], *protection);
  if (!bytes.ok()) return ModelError(io, NamePath(bytes.status(), pos[0]));
  auto report = InspectModelFile(bytes->readable_path(), options);
  if (!report.ok())
    return ModelError(io,
                      NamePath(Status(report.status().code(), bytes->NameModel(report.status().message())), pos[0]));
  report->path = pos[0];
  if (flags->Has("--json")) {
    io.out << InspectReportToJson(*report) << "\n";
  } else {
    // Names come from an untrusted file: no terminal control characters reach the terminal.
    std::string text = InspectReportToText(*report);
    for (char& c : text) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) c = '?';
    }
    io.out << text;
  }
  io.out.flush();
  return kExitSuccess;
}

}  // namespace cli
}  // namespace sorun
