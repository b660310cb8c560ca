#include "tools/cli/relax_report.h"

#include <cstdint>
#include <string>
#include <vector>

#include "graph_executor/memory_plan.h"
#include "runtime/data_type.h"
#include "tools/cli/text_table.h"

namespace sorun {
namespace cli {
namespace {

std::string Shape(const std::vector<int64_t>& shape) {
  return ShapeToString(shape.data(), static_cast<int>(shape.size()));
}

std::string Dims(const relax::VmInputInfo& in) {
  if (in.is_scalar) return "R.Prim scalar (give a 0-d tensor)";
  if (in.dims.empty() && in.ndim == 0) return "[]";
  if (in.dims.empty()) return in.ndim < 0 ? "shape unknown" : std::to_string(in.ndim) + "-d, dims unknown";
  return SignatureShapeToString(in.dims);
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

uint64_t UnalignedCount(const RelaxInspection& r) {
  uint64_t n = 0;
  for (const RelaxTensorConstant& t : r.tensors) n += t.aligned() ? 0 : 1;
  return n;
}

}  // namespace

std::string RelaxInspectionToText(const RelaxInspection& r) {
  std::string out;
  out += "\nexecutable (module 0, " + r.root_type_key + ")\n";
  out += "  magic " + std::string(r.magic_v2 ? "V2" : "V1") + ", version " + r.version + ", " +
         std::to_string(r.functions.size()) + " functions, " + std::to_string(r.num_constants) + " constants, " +
         std::to_string(r.num_instructions) + " instructions\n";

  out += "\nvm functions\n";
  TextTable fns("  ");
  for (const RelaxFunctionSummary& f : r.functions) {
    if (f.kind != "vm function") continue;
    fns.AddRow({f.name + "(" + Join(f.params) + ")", f.kind, std::to_string(f.registers) + " registers",
                "instructions [" + std::to_string(f.start_instr) + ", " + std::to_string(f.end_instr) + ")"});
  }
  for (const RelaxFunctionSummary& f : r.functions) {
    if (f.kind == "vmtir function") fns.AddRow({f.name, f.kind, "", ""});
  }
  out += fns.Render();

  out += "\ninputs (main)\n";
  if (!r.inputs_note.empty()) {
    out += "  none: " + r.inputs_note + "\n";
  } else {
    TextTable in("  ");
    for (const relax::VmInputInfo& i : r.inputs) {
      in.AddRow({i.name, i.has_dtype ? DTypeToString(i.dtype, r.dtype_codes) : "dtype unknown", Dims(i)});
    }
    out += in.Render();
  }
  out += "\noutputs (main's return value, flattened)\n";
  if (r.outputs.empty()) {
    out += "  known after a run (the bytecode does not say)\n";
  } else {
    TextTable outs("  ");
    for (const TensorInfo& o : r.outputs)
      outs.AddRow({o.name, DTypeToString(o.dtype, r.dtype_codes), SignatureShapeToString(o.shape)});
    out += outs.Render();
  }

  const uint64_t unaligned = UnalignedCount(r);
  out += "\nconstants: " + std::to_string(r.num_constants) + " (" + std::to_string(r.tensors.size()) +
         (r.tensors.size() == 1 ? " tensor, " : " tensors, ") + FormatBytes(r.tensor_bytes) + ")";
  if (!r.tensors.empty()) {
    out += unaligned == 0 ? "; every tensor 64-byte aligned (used in place)"
                          : "; " + std::to_string(unaligned) + " not 64-byte aligned (copied at load)";
  }
  out += "\n";
  TextTable consts("  ");
  consts.AlignRight(2);
  for (const RelaxTensorConstant& t : r.tensors) {
    consts.AddRow({"c[" + std::to_string(t.index) + "]", DTypeToString(t.dtype, r.dtype_codes) + Shape(t.shape),
                   std::to_string(t.bytes) + " B", "alignment " + std::to_string(t.alignment),
                   t.aligned() ? "" : "NOT 64-byte aligned"});
  }
  out += consts.Render();

  out += "\ncalled functions\n";
  TextTable calls("  ");
  for (const relax::CalleeInfo& c : r.callees) {
    if (c.callee_class == relax::CalleeClass::kVmFunction) continue;
    calls.AddRow({c.name, relax::CalleeClassName(c.callee_class) + (c.reason.empty() ? "" : " (" + c.reason + ")"),
                  std::to_string(c.call_sites) + (c.call_sites == 1 ? " call site" : " call sites")});
  }
  out += calls.Render();
  return out;
}

std::string RelaxVerdictToText(const RelaxInspection& r) {
  if (r.refusals.empty()) return "\nrunnable by sorun: yes\n";
  std::string out = "\nrunnable by sorun: NO (" + std::to_string(r.refusals.size()) +
                    (r.refusals.size() == 1 ? " reason)\n" : " reasons)\n");
  for (const std::string& line : r.refusals) out += "  " + line + "\n";
  return out;
}

void WriteRelaxInspectionJson(JsonWriter& w, const RelaxInspection& r) {
  w.StartObject();
  w.Key("symbol");
  WriteJsonString(w, r.symbol);
  w.Key("tvm_versions");
  WriteJsonString(w, r.tvm_versions);
  w.Key("root_type_key");
  WriteJsonString(w, r.root_type_key);
  w.Key("magic");
  w.String(r.magic_v2 ? "V2" : "V1");
  w.Key("version");
  WriteJsonString(w, r.version);
  w.Key("instructions");
  w.Uint64(r.num_instructions);
  w.Key("functions");
  w.StartArray();
  for (const RelaxFunctionSummary& f : r.functions) {
    w.StartObject();
    w.Key("name");
    WriteJsonString(w, f.name);
    w.Key("kind");
    WriteJsonString(w, f.kind);
    if (f.kind == "vm function") {
      w.Key("params");
      WriteJsonStrings(w, f.params);
      w.Key("registers");
      w.Int64(f.registers);
      w.Key("instructions");
      WriteJsonShape(w, {f.start_instr, f.end_instr});
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("inputs");
  w.StartArray();
  for (const relax::VmInputInfo& i : r.inputs) {
    w.StartObject();
    w.Key("name");
    WriteJsonString(w, i.name);
    w.Key("dtype");
    if (i.has_dtype) {
      WriteJsonString(w, DTypeToString(i.dtype, r.dtype_codes));
    } else {
      w.Null();
    }
    w.Key("ndim");
    w.Int64(i.ndim);
    w.Key("dims");  // -1: not static
    WriteJsonShape(w, i.dims);
    w.Key("scalar");  // an R.Prim value: given as a 0-d tensor
    w.Bool(i.is_scalar);
    w.EndObject();
  }
  w.EndArray();
  w.Key("constants");
  w.StartObject();
  w.Key("count");
  w.Uint64(r.num_constants);
  w.Key("tensor_bytes");
  w.Uint64(r.tensor_bytes);
  w.Key("unaligned_tensors");
  w.Uint64(UnalignedCount(r));
  w.Key("tensors");
  w.StartArray();
  for (const RelaxTensorConstant& t : r.tensors) {
    w.StartObject();
    w.Key("index");
    w.Uint64(t.index);
    w.Key("dtype");
    WriteJsonString(w, DTypeToString(t.dtype, r.dtype_codes));
    w.Key("shape");
    WriteJsonShape(w, t.shape);
    w.Key("bytes");
    w.Uint64(t.bytes);
    w.Key("alignment");
    w.Uint64(t.alignment);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Key("callees");
  w.StartArray();
  for (const relax::CalleeInfo& c : r.callees) {
    w.StartObject();
    w.Key("name");
    WriteJsonString(w, c.name);
    w.Key("class");
    w.String(relax::CalleeClassName(c.callee_class));
    if (!c.reason.empty()) {
      w.Key("reason");
      WriteJsonString(w, c.reason);
    }
    w.Key("call_sites");
    w.Int(c.call_sites);
    w.EndObject();
  }
  w.EndArray();
  w.Key("system_lib");
  w.Bool(r.system_lib);
  w.Key("runnable");
  w.Bool(r.refusals.empty());
  w.Key("refusals");
  WriteJsonStrings(w, r.refusals);
  w.EndObject();
}

}  // namespace cli
}  // namespace sorun
