#include "graph_executor/graph_json.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <set>

#include "graph_executor/plan_validation.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

using rapidjson::Value;

Status Bad(const std::string& what) { return DataLoss("graph JSON: " + what); }

// TVM's reader keeps the last of two equal keys, RapidJSON keeps both: a graph whose meaning depends on
// which one a reader picks is refused. `where` names the object ("top level", "node 3", ...).
Status CheckUniqueKeys(const Value& object, const std::string& where) {
  std::set<std::string_view> keys;
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (!keys.insert(key).second) return Bad(where + ": key '" + std::string(key) + "' appears twice");
  }
  return Status::Ok();
}

// Reads a non-negative integer that fits in uint32.
bool GetU32(const Value& v, uint32_t* out) {
  if (v.IsUint()) {
    *out = v.GetUint();
    return true;
  }
  if (v.IsUint64() && v.GetUint64() <= UINT32_MAX) {
    *out = static_cast<uint32_t>(v.GetUint64());
    return true;
  }
  return false;
}

bool ParseDecimal(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 9) return false;
  uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  *out = v;
  return true;
}

Status ParseEntryRef(const Value& v, const std::string& where, GraphEntryRef* out) {
  if (!v.IsArray() || v.Size() < 2 || v.Size() > 3) {
    return Bad(where + ": expected [node_id, index] or [node_id, index, version]");
  }
  if (!GetU32(v[0], &out->node_id) || !GetU32(v[1], &out->index) || (v.Size() == 3 && !GetU32(v[2], &out->version))) {
    return Bad(where + ": entries must be non-negative integers");
  }
  return Status::Ok();
}

Status ParseNode(const Value& v, uint32_t nid, GraphNode* node) {
  const std::string where = "node " + std::to_string(nid);
  if (!v.IsObject()) return Bad(where + ": not an object");
  SORUN_RETURN_IF_ERROR(CheckUniqueKeys(v, where));
  bool has_op = false, has_name = false, has_inputs = false;
  const Value* attrs = nullptr;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const Value& val = it->value;
    if (key == "op") {
      if (!val.IsString()) return Bad(where + ": 'op' must be a string");
      node->op.assign(val.GetString(), val.GetStringLength());
      has_op = true;
    } else if (key == "name") {
      if (!val.IsString()) return Bad(where + ": 'name' must be a string");
      node->name.assign(val.GetString(), val.GetStringLength());
      has_name = true;
    } else if (key == "inputs") {
      if (!val.IsArray()) return Bad(where + ": 'inputs' must be an array");
      for (rapidjson::SizeType i = 0; i < val.Size(); ++i) {
        GraphEntryRef ref;
        SORUN_RETURN_IF_ERROR(ParseEntryRef(val[i], where + " input " + std::to_string(i), &ref));
        node->inputs.push_back(ref);
      }
      has_inputs = true;
    } else if (key == "attrs" || key == "attr") {
      if (!val.IsObject()) return Bad(where + ": 'attrs' must be an object");
      if (attrs) return Bad(where + ": has both 'attrs' and 'attr'");
      attrs = &val;
    } else if (key == "control_deps") {
      if (!val.IsArray()) return Bad(where + ": 'control_deps' must be an array");
      for (rapidjson::SizeType i = 0; i < val.Size(); ++i) {
        uint32_t d = 0;
        if (!GetU32(val[i], &d)) return Bad(where + ": 'control_deps' entries must be node ids");
        node->control_deps.push_back(d);
      }
    } else {
      return Bad(where + ": unsupported key '" + key + "'");
    }
  }
  if (!has_op || !has_name || !has_inputs) {
    return Bad(where + ": missing " + std::string(!has_op ? "'op'" : !has_name ? "'name'" : "'inputs'"));
  }
  const std::string named = where + " ('" + node->name + "')";
  if (node->op != "null" && node->op != "tvm_op") {
    return Bad(named + ": op '" + node->op + "' is not supported (expected 'null' or 'tvm_op')");
  }
  if (attrs) {
    SORUN_RETURN_IF_ERROR(CheckUniqueKeys(*attrs, named + " attrs"));
    for (auto it = attrs->MemberBegin(); it != attrs->MemberEnd(); ++it) {
      std::string key(it->name.GetString(), it->name.GetStringLength());
      if (!it->value.IsString()) return Bad(named + ": attribute '" + key + "' must be a string");
      std::string value(it->value.GetString(), it->value.GetStringLength());
      if (key == "func_name") {
        node->func_name = value;
      } else if (key == "num_inputs" || key == "num_outputs") {
        uint32_t n = 0;
        if (!ParseDecimal(value, &n)) return Bad(named + ": attribute '" + key + "' = '" + value + "' is not a count");
        (key == "num_inputs" ? node->num_inputs : node->num_outputs) = n;
      } else if (key == "flatten_data") {
        if (value != "0" && value != "1") return Bad(named + ": attribute 'flatten_data' must be \"0\" or \"1\"");
        node->flatten_data = value == "1";
      } else {
        node->extra_attrs.emplace_back(key, value);
      }
    }
  }
  if (node->op == "tvm_op") {
    bool has[4] = {false, false, false, false};
    if (attrs) {
      has[0] = attrs->HasMember("func_name");
      has[1] = attrs->HasMember("num_inputs");
      has[2] = attrs->HasMember("num_outputs");
      has[3] = attrs->HasMember("flatten_data");
    }
    static const char* kNames[4] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
    for (int i = 0; i < 4; ++i) {
      if (!has[i]) return Bad(named + ": tvm_op needs attribute '" + kNames[i] + "'");
    }
    if (node->func_name.empty()) return Bad(named + ": empty func_name");
    if (node->num_outputs == 0) return Bad(named + ": num_outputs must be at least 1");
    if (node->num_inputs != node->inputs.size()) {
      return Bad(named + ": num_inputs is " + std::to_string(node->num_inputs) + " but the node lists " +
                 std::to_string(node->inputs.size()) + " inputs");
    }
  } else {
    if (!node->inputs.empty()) return Bad(named + ": an input node ('null' op) cannot have inputs");
    node->num_outputs = 1;
  }
  return Status::Ok();
}

// attrs entries are ["tag", value].
Status ParseAttrs(const Value& attrs, GraphSpec* g) {
  if (!attrs.IsObject()) return Bad("'attrs' must be an object");
  SORUN_RETURN_IF_ERROR(CheckUniqueKeys(attrs, "'attrs'"));
  bool has_dltype = false, has_sid = false, has_shape = false;
  for (auto it = attrs.MemberBegin(); it != attrs.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const Value& pair = it->value;
    if (!pair.IsArray() || pair.Size() != 2 || !pair[0].IsString()) {
      return Bad("attrs '" + key + "' must be [\"<type>\", value]");
    }
    std::string tag = pair[0].GetString();
    const Value& v = pair[1];
    auto expect = [&](const char* want) -> Status {
      if (tag != want) return Bad("attrs '" + key + "' has type '" + tag + "', expected '" + want + "'");
      if (!v.IsArray()) return Bad("attrs '" + key + "' value must be an array");
      return Status::Ok();
    };
    if (key == "dltype") {
      SORUN_RETURN_IF_ERROR(expect("list_str"));
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!v[i].IsString()) return Bad("attrs 'dltype' entry " + std::to_string(i) + " is not a string");
        auto t = ParseDType(v[i].GetString());
        if (!t.ok()) return Bad("attrs 'dltype' entry " + std::to_string(i) + ": " + t.status().message());
        g->dltype.push_back(*t);
      }
      has_dltype = true;
    } else if (key == "storage_id") {
      SORUN_RETURN_IF_ERROR(expect("list_int"));
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!v[i].IsInt64()) return Bad("attrs 'storage_id' entry " + std::to_string(i) + " is not an integer");
        if (v[i].GetInt64() < 0) {
          return Bad("attrs 'storage_id' entry " + std::to_string(i) +
                     " is negative (dynamic shapes are not supported)");
        }
        g->storage_id.push_back(v[i].GetInt64());
      }
      has_sid = true;
    } else if (key == "shape") {
      SORUN_RETURN_IF_ERROR(expect("list_shape"));
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!v[i].IsArray()) return Bad("attrs 'shape' entry " + std::to_string(i) + " is not an array");
        std::vector<int64_t> shape;
        for (rapidjson::SizeType j = 0; j < v[i].Size(); ++j) {
          if (!v[i][j].IsInt64() || v[i][j].GetInt64() < 0) {
            return Bad("attrs 'shape' entry " + std::to_string(i) + " dimension " + std::to_string(j) +
                       " is not a non-negative integer");
          }
          shape.push_back(v[i][j].GetInt64());
        }
        g->shape.push_back(std::move(shape));
      }
      has_shape = true;
    } else if (key == "device_index") {
      SORUN_RETURN_IF_ERROR(expect("list_int"));
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!v[i].IsInt() || v[i].GetInt() <= 0) {
          return Bad("attrs 'device_index' entry " + std::to_string(i) + " is not a device type");
        }
        g->device_index.push_back(v[i].GetInt());
      }
    } else if (key == "storage_scope") {
      SORUN_RETURN_IF_ERROR(expect("list_str"));
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (!v[i].IsString()) return Bad("attrs 'storage_scope' entry " + std::to_string(i) + " is not a string");
        g->storage_scope.emplace_back(v[i].GetString(), v[i].GetStringLength());
      }
    } else if (tag == "list_int" || tag == "size_t") {
      std::vector<int64_t> values;
      if (v.IsArray()) {
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) values.push_back(v[i].IsInt64() ? v[i].GetInt64() : 0);
      } else if (v.IsInt64()) {
        values.push_back(v.GetInt64());
      }
      g->extra_int_attrs.emplace_back(key, std::move(values));
    } else {
      return Bad("cannot skip graph attr '" + key + "' of type '" + tag + "'");
    }
  }
  if (!has_dltype) return Bad("attrs lacks 'dltype'");
  if (!has_sid) return Bad("attrs lacks 'storage_id'");
  if (!has_shape) return Bad("attrs lacks 'shape'");
  return Status::Ok();
}

Status Validate(GraphSpec* g) {
  const uint32_t n = static_cast<uint32_t>(g->nodes.size());
  if (g->node_row_ptr.size() != static_cast<size_t>(n) + 1) {
    return Bad("node_row_ptr has " + std::to_string(g->node_row_ptr.size()) + " entries, expected " +
               std::to_string(n + 1) + " (nodes + 1)");
  }
  if (g->node_row_ptr[0] != 0) return Bad("node_row_ptr[0] must be 0");
  for (uint32_t i = 0; i < n; ++i) {
    if (g->node_row_ptr[i + 1] < g->node_row_ptr[i] ||
        g->node_row_ptr[i + 1] - g->node_row_ptr[i] != g->nodes[i].num_outputs) {
      return Bad("node_row_ptr gives " + g->DescribeNode(i) + " " +
                 std::to_string(static_cast<int64_t>(g->node_row_ptr[i + 1]) - g->node_row_ptr[i]) +
                 " outputs but it has num_outputs " + std::to_string(g->nodes[i].num_outputs));
    }
  }
  const uint32_t entries = g->num_entries();
  auto check_len = [&](const char* key, size_t size) -> Status {
    if (size != entries) {
      return Bad("attrs '" + std::string(key) + "' has " + std::to_string(size) + " entries, expected " +
                 std::to_string(entries) + " (one per node output)");
    }
    return Status::Ok();
  };
  SORUN_RETURN_IF_ERROR(check_len("dltype", g->dltype.size()));
  SORUN_RETURN_IF_ERROR(check_len("storage_id", g->storage_id.size()));
  SORUN_RETURN_IF_ERROR(check_len("shape", g->shape.size()));
  if (!g->device_index.empty()) SORUN_RETURN_IF_ERROR(check_len("device_index", g->device_index.size()));
  if (!g->storage_scope.empty()) SORUN_RETURN_IF_ERROR(check_len("storage_scope", g->storage_scope.size()));
  for (uint32_t e = 0; e < entries; ++e) {
    auto bytes = ShapeByteSize(g->shape[e].data(), static_cast<int>(g->shape[e].size()), g->dltype[e]);
    if (!bytes.ok()) return Bad("entry " + std::to_string(e) + ": " + bytes.status().message());
    uint32_t bits = static_cast<uint32_t>(g->dltype[e].bits) * g->dltype[e].lanes;
    if (bits % 8 != 0 && bits != 1 && bits != 4) {
      return Bad("entry " + std::to_string(e) + ": dtype " + DTypeToString(g->dltype[e]) +
                 " has a bit width that cannot be stored");
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    const GraphNode& node = g->nodes[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const GraphEntryRef& in = node.inputs[k];
      if (in.node_id >= i) {
        return Bad(g->DescribeNode(i) + " input " + std::to_string(k) + " refers to node " +
                   std::to_string(in.node_id) +
                   (in.node_id >= n ? ", out of range" : ", which does not come before it"));
      }
      if (in.index >= g->nodes[in.node_id].num_outputs) {
        return Bad(g->DescribeNode(i) + " input " + std::to_string(k) + " refers to output " +
                   std::to_string(in.index) + " of " + g->DescribeNode(in.node_id) + ", which has " +
                   std::to_string(g->nodes[in.node_id].num_outputs));
      }
    }
    for (uint32_t d : node.control_deps) {
      if (d >= n) return Bad(g->DescribeNode(i) + " control dependency " + std::to_string(d) + " out of range");
    }
    if (node.func_name == "__copy" && (node.inputs.size() != 1 || node.num_outputs != 1)) {
      return Bad(g->DescribeNode(i) + ": __copy takes one input and one output");
    }
  }
  std::set<uint32_t> seen;
  for (size_t k = 0; k < g->arg_nodes.size(); ++k) {
    uint32_t a = g->arg_nodes[k];
    if (a >= n) return Bad("arg_nodes[" + std::to_string(k) + "] = " + std::to_string(a) + " is out of range");
    if (!g->nodes[a].is_input())
      return Bad("arg_nodes[" + std::to_string(k) + "] is " + g->DescribeNode(a) + ", not an input node");
    if (!seen.insert(a).second) return Bad("arg_nodes lists " + g->DescribeNode(a) + " twice");
  }
  if (g->heads.empty()) return Bad("'heads' is empty: the graph has no outputs");
  for (size_t k = 0; k < g->heads.size(); ++k) {
    const GraphEntryRef& h = g->heads[k];
    if (h.node_id >= n || h.index >= g->nodes[h.node_id].num_outputs) {
      return Bad("heads[" + std::to_string(k) + "] refers to a missing node output (" + std::to_string(h.node_id) +
                 ", " + std::to_string(h.index) + ")");
    }
  }
  // Inputs, names, __nop aliasing and the liveness of the storage plan.
  return ValidateExecutionPlan(*g);
}

}  // namespace

std::string GraphSpec::DescribeNode(uint32_t node_id) const {
  if (node_id >= nodes.size()) return "node " + std::to_string(node_id);
  return "node " + std::to_string(node_id) + " ('" + nodes[node_id].name + "')";
}

uint64_t GraphSpec::EntryBytes(uint32_t eid) const {
  auto b = ShapeByteSize(shape[eid].data(), static_cast<int>(shape[eid].size()), dltype[eid]);
  return b.ok() ? *b : 0;
}

StatusOr<GraphSpec> GraphSpec::Parse(std::string_view json) {
  rapidjson::Document doc;
  // Iterative parsing: the recursive parser uses stack space per nesting level, so a few hundred KB
  // of '[' would overflow the thread's stack and crash the process instead of failing the load.
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return Bad(std::string("syntax error at byte ") + std::to_string(doc.GetErrorOffset()) + ": " +
               rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return Bad("top level is not an object");
  SORUN_RETURN_IF_ERROR(CheckUniqueKeys(doc, "top level"));
  GraphSpec g;
  bool has[5] = {false, false, false, false, false};
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    const Value& v = it->value;
    if (key == "nodes") {
      if (!v.IsArray()) return Bad("'nodes' must be an array");
      g.nodes.resize(v.Size());
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) SORUN_RETURN_IF_ERROR(ParseNode(v[i], i, &g.nodes[i]));
      has[0] = true;
    } else if (key == "arg_nodes" || key == "node_row_ptr") {
      if (!v.IsArray()) return Bad("'" + key + "' must be an array");
      auto& out = key == "arg_nodes" ? g.arg_nodes : g.node_row_ptr;
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        uint32_t x = 0;
        if (!GetU32(v[i], &x))
          return Bad("'" + key + "' entry " + std::to_string(i) + " is not a non-negative integer");
        out.push_back(x);
      }
      has[key == "arg_nodes" ? 1 : 2] = true;
    } else if (key == "heads") {
      if (!v.IsArray()) return Bad("'heads' must be an array");
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        GraphEntryRef ref;
        SORUN_RETURN_IF_ERROR(ParseEntryRef(v[i], "heads[" + std::to_string(i) + "]", &ref));
        g.heads.push_back(ref);
      }
      has[3] = true;
    } else if (key == "attrs") {
      SORUN_RETURN_IF_ERROR(ParseAttrs(v, &g));
      has[4] = true;
    } else if (key == "metadata") {
      // TVM stops reading at this key; it carries nothing the executor needs.
    } else {
      return Bad("key '" + key + "' is not supported");
    }
  }
  static const char* kRequired[5] = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"};
  for (int i = 0; i < 5; ++i) {
    if (!has[i]) return Bad(std::string("missing required key '") + kRequired[i] + "'");
  }
  SORUN_RETURN_IF_ERROR(Validate(&g));
  return g;
}

std::string GraphSpec::ToJson() const {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto write_ref = [&](const GraphEntryRef& r) {
    w.StartArray();
    w.Uint(r.node_id);
    w.Uint(r.index);
    w.Uint(r.version);
    w.EndArray();
  };
  w.StartObject();
  w.Key("nodes");
  w.StartArray();
  for (const GraphNode& n : nodes) {
    w.StartObject();
    w.Key("op");
    w.String(n.op.c_str(), static_cast<rapidjson::SizeType>(n.op.size()));
    w.Key("name");
    w.String(n.name.c_str(), static_cast<rapidjson::SizeType>(n.name.size()));
    w.Key("inputs");
    w.StartArray();
    for (const auto& in : n.inputs) write_ref(in);
    w.EndArray();
    if (!n.is_input()) {
      w.Key("attrs");
      w.StartObject();
      w.Key("func_name");
      w.String(n.func_name.c_str(), static_cast<rapidjson::SizeType>(n.func_name.size()));
      w.Key("num_inputs");
      w.String(std::to_string(n.num_inputs).c_str());
      w.Key("num_outputs");
      w.String(std::to_string(n.num_outputs).c_str());
      w.Key("flatten_data");
      w.String(n.flatten_data ? "1" : "0");
      for (const auto& kv : n.extra_attrs) {
        w.Key(kv.first.c_str(), static_cast<rapidjson::SizeType>(kv.first.size()));
        w.String(kv.second.c_str(), static_cast<rapidjson::SizeType>(kv.second.size()));
      }
      w.EndObject();
    }
    if (!n.control_deps.empty()) {
      w.Key("control_deps");
      w.StartArray();
      for (uint32_t d : n.control_deps) w.Uint(d);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("arg_nodes");
  w.StartArray();
  for (uint32_t a : arg_nodes) w.Uint(a);
  w.EndArray();
  w.Key("heads");
  w.StartArray();
  for (const auto& h : heads) write_ref(h);
  w.EndArray();
  w.Key("attrs");
  w.StartObject();
  w.Key("dltype");
  w.StartArray();
  w.String("list_str");
  w.StartArray();
  for (const auto& t : dltype) w.String(DTypeToString(t).c_str());
  w.EndArray();
  w.EndArray();
  w.Key("storage_id");
  w.StartArray();
  w.String("list_int");
  w.StartArray();
  for (int64_t s : storage_id) w.Int64(s);
  w.EndArray();
  w.EndArray();
  w.Key("shape");
  w.StartArray();
  w.String("list_shape");
  w.StartArray();
  for (const auto& s : shape) {
    w.StartArray();
    for (int64_t d : s) w.Int64(d);
    w.EndArray();
  }
  w.EndArray();
  w.EndArray();
  if (!device_index.empty()) {
    w.Key("device_index");
    w.StartArray();
    w.String("list_int");
    w.StartArray();
    for (int32_t d : device_index) w.Int(d);
    w.EndArray();
    w.EndArray();
  }
  if (!storage_scope.empty()) {
    w.Key("storage_scope");
    w.StartArray();
    w.String("list_str");
    w.StartArray();
    for (const auto& s : storage_scope) w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
    w.EndArray();
    w.EndArray();
  }
  for (const auto& kv : extra_int_attrs) {
    w.Key(kv.first.c_str(), static_cast<rapidjson::SizeType>(kv.first.size()));
    w.StartArray();
    w.String("list_int");
    w.StartArray();
    for (int64_t v : kv.second) w.Int64(v);
    w.EndArray();
    w.EndArray();
  }
  w.EndObject();
  w.Key("node_row_ptr");
  w.StartArray();
  for (uint32_t r : node_row_ptr) w.Uint(r);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace sorun
