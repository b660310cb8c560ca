// make_corpus: writes the seed corpora of sorun's fuzz targets (fuzz/corpus/<target>/), small valid
// inputs built with sorun's own writers: blobs of several module trees (factory + _lib, + opencl,
// + cuda ptx/cubin/fatbin, legacy layouts), factory and device payloads, graph JSONs, params files,
// .npy files, small real shared libraries / objects (ELF), tar archives, libraries + blobs for the
// injector and blobs for the model-load target.
//
// Usage (fuzz/make_corpus.sh runs it): make_corpus OUT_DIR [PACKED_ZOO_MODEL.so...]
// (the blobs of the packed zoo models named, where small enough, become model_load_fuzzer seeds)
// Needs a C compiler (cc, or $CC) for the ELF and tar seeds. Deterministic: running it twice gives the
// same bytes (given the same compiler). Single-threaded tool.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cuda/cuda_module.h"
#include "backends/device_module_payload.h"
#include "backends/opencl/opencl_module.h"
#include "base/file_util.h"
#include "base/subprocess.h"
#include "format/binary_writer.h"
#include "format/tar_archive.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "inspect/elf_reader.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "packer/tar_writer.h"
#include "runtime/data_type.h"
#include "runtime/tensor.h"
#include "runtime/tensor_io.h"
#include "tools/npy.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;

std::string g_out;
int g_files = 0;

void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "make_corpus: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Must(StatusOr<T> v, const std::string& what) {
  if (!v.ok()) Die(what, v.status());
  return std::move(v).value();
}

void Must(const Status& s, const std::string& what) {
  if (!s.ok()) Die(what, s);
}

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::string dir = g_out + "/" + target;
  fs::create_directories(dir);
  Must(WriteFileBytes(dir + "/" + name, bytes), "writing " + name);
  ++g_files;
}

// A CPU tensor with deterministic contents.
Tensor MakeTensor(std::vector<int64_t> shape, DLDataType dtype, int seed = 1) {
  Tensor t = Must(Tensor::Empty(shape, dtype, CpuDevice()), "tensor");
  auto* p = static_cast<uint8_t*>(t.data());
  for (uint64_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>((i * 37 + static_cast<uint64_t>(seed)) & 0x3f);
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Graphs

// data[1,8] -> dense(w, bias) -> softmax
std::string MlpJson() {
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int w = b.Input("w", {4, 8});
  int bias = b.Input("bias", {4});
  int h = b.Op("fused_dense_bias_relu", {x, w, bias}, {1, 4}, Float32(), "fc");
  b.Output(b.Op("fused_softmax", {h}, {1, 4}, Float32(), "softmax"));
  return Must(b.BuildJson(), "mlp graph");
}

NamedTensors MlpParams() { return {{"w", MakeTensor({4, 8}, Float32())}, {"bias", MakeTensor({4}, Float32(), 2)}}; }

// A chain with a __nop reshape and storage reuse between intermediates; flatten_data on one op.
std::string ChainJson() {
  GraphBuilder b;
  int x = b.Input("data", {2, 4});
  int a = b.Op("fused_relu", {x}, {2, 4});
  int r = b.Reshape(a, {8});
  int c = b.Op("fused_exp", {r}, {8}, Float32(), "", /*flatten_data=*/true);
  int d = b.Op("fused_neg", {c}, {8});
  int e = b.Op("fused_tanh", {d}, {8});
  b.Output(e);
  b.Output(b.Op("fused_cast", {e}, {8}, Int32(), "cast"));
  return Must(b.BuildJson(), "chain graph");
}

// Heterogeneous: device_index on every entry (CPU input, OpenCL ops).
std::string HeteroJson() {
  GraphBuilder b;
  int x = b.Input("data", {4});
  int y = b.Op("fused_add_one", {x}, {4});
  b.SetDeviceType(y, kDLOpenCL);
  int z = b.Op("fused_mul_two", {y}, {4});
  b.SetDeviceType(z, kDLOpenCL);
  b.Output(z);
  return Must(b.BuildJson(), "hetero graph");
}

// Several dtypes, including bool (1 bit), float16, int8, int64, uint8, bfloat16.
std::string DtypesJson() {
  GraphBuilder b;
  int m = b.Input("mask", {3}, Bool());
  int h = b.Input("h", {2, 2}, MakeDType(kDLFloat, 16));
  int i = b.Input("i8", {5}, MakeDType(kDLInt, 8));
  int l = b.Input("idx", {2}, Int64());
  int u = b.Input("u8", {1, 1, 1, 3}, UInt8());
  int o = b.Op("fused_select", {m, h, i, l, u}, {2, 2}, MakeDType(kDLBfloat, 16), "select");
  b.Output(o);
  return Must(b.BuildJson(), "dtypes graph");
}

// TVM's own style, by hand: 3-element refs, a two-output op, __copy across devices, storage_scope,
// an extra list_int attr, "attr" spelling, control_deps, a scalar entry and "metadata" last.
const char kTvmStyleJson[] = R"({
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "p0", "inputs": []},
    {"op": "tvm_op", "name": "tvmgen_default_fused_split", "attr": {"func_name": "tvmgen_default_fused_split",
      "num_inputs": "2", "num_outputs": "2", "flatten_data": "0", "hash": "c0ffee"},
     "inputs": [[0, 0, 0], [1, 0, 0]]},
    {"op": "tvm_op", "name": "copy", "attrs": {"func_name": "__copy", "num_inputs": "1", "num_outputs": "1",
      "flatten_data": "0"}, "inputs": [[2, 1, 0]], "control_deps": [2]},
    {"op": "tvm_op", "name": "reshape_nop", "attrs": {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1",
      "flatten_data": "0"}, "inputs": [[2, 0, 0]]}
  ],
  "arg_nodes": [0, 1],
  "heads": [[4, 0, 0], [3, 0, 0], [2, 1]],
  "attrs": {
    "dltype": ["list_str", ["float32", "float32", "float32", "float32", "float32", "float32"]],
    "storage_id": ["list_int", [0, 1, 2, 3, 4, 2]],
    "shape": ["list_shape", [[1, 4], [], [1, 2], [1, 2], [1, 2], [2]]],
    "device_index": ["list_int", [1, 1, 1, 1, 1, 1]],
    "storage_scope": ["list_str", ["global", "global", "global", "global", "global", "global"]],
    "foo": ["list_int", [1, 2, 3]],
    "bar": ["size_t", 7]
  },
  "node_row_ptr": [0, 1, 2, 4, 5, 6],
  "metadata": {"signatures": {}}
})";

// The smallest graph: one input that is also the output.
const char kIdentityJson[] =
    R"({"nodes":[{"op":"null","name":"x","inputs":[]}],"arg_nodes":[0],"node_row_ptr":[0,1],"heads":[[0,0,0]],)"
    R"("attrs":{"dltype":["list_str",["int32"]],"storage_id":["list_int",[0]],"shape":["list_shape",[[0,3]]]}})";

// ---------------------------------------------------------------------------------------------------
// Device modules

DLDataType Handle() { return MakeDType(kDTypeHandle, 64); }

DeviceModulePayload CudaPayload(const std::string& fmt) {
  DeviceModulePayload p;
  p.fmt = fmt;
  FunctionInfo add;
  add.arg_types = {Handle(), Handle(), Handle(), Int32()};
  add.launch_param_tags = {"blockIdx.x", "threadIdx.x"};
  FunctionInfo reduce;
  reduce.arg_types = {Handle(), Float32(), Int64(), MakeDType(kDLFloat, 64)};
  reduce.launch_param_tags = {"blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y", "tir.use_dyn_shared_memory"};
  p.functions = {{"default_function_kernel", add}, {"reduce_kernel", reduce}};
  if (fmt == "ptx") {
    p.data =
        "//\n// Generated by NVIDIA NVVM Compiler\n.version 7.0\n.target sm_50\n.address_size 64\n"
        ".visible .entry default_function_kernel(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
        "{ ret; }\n.visible .entry reduce_kernel(.param .u64 a, .param .f32 s, .param .u64 n, .param .f64 d)\n"
        "{ ret; }\n";
  } else if (fmt == "cubin") {
    p.data = std::string(
                 "\x7f"
                 "ELF\x02\x01\x01\x33",
                 8) +
             std::string(56, '\0');  // a fake cubin header
  } else {
    p.data = std::string("\x50\xed\x55\xba\x01\x00\x10\x00", 8) + std::string(24, '\0');  // fatbin magic + header
  }
  return p;
}

DeviceModulePayload OpenclPayload(bool split) {
  DeviceModulePayload p;
  p.fmt = "cl";
  FunctionInfo copy;
  copy.arg_types = {Handle(), Handle()};
  copy.launch_param_tags = {"blockIdx.x", "threadIdx.x"};
  FunctionInfo scale;
  scale.arg_types = {Handle(), Float32(), Int32()};
  scale.launch_param_tags = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  p.functions = {{"copy_kernel", copy}, {"scale_kernel", scale}};
  const std::string copy_src =
      "__kernel void copy_kernel(__global const float* a, __global float* b) {\n"
      "  b[get_global_id(0)] = a[get_global_id(0)];\n}\n";
  const std::string scale_src =
      "__kernel void scale_kernel(__global float* a, float s, int n) {\n  a[get_global_id(0)] *= s;\n}\n";
  if (split) {
    p.data = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n// Function: copy_kernel\n" + copy_src +
             "// Function: scale_kernel\n" + scale_src;
  } else {
    p.data = copy_src + scale_src;
  }
  return p;
}

std::string DevicePayloadBytes(const DeviceModulePayload& p) {
  BinaryWriter w;
  WriteDeviceModulePayload(p, &w);
  return w.bytes();
}

// ---------------------------------------------------------------------------------------------------
// Module trees and blobs

Module CudaModule(const std::string& fmt) { return Must(CreateCudaModule(CudaPayload(fmt)), "cuda module"); }
Module OpenclModule(bool split) {
  OpenclModuleOptions options;
  options.disable_program_cache = true;
  return Must(CreateOpenclModule(OpenclPayload(split), options), "opencl module");
}

std::string g_tiny_c;  // a one-function C file: the host code of the ELF seeds

Module TinyHost() {
  HostCode code;
  code.files = {g_tiny_c};
  // As small as a real shared library gets: no start files, no separate code pages, stripped.
  code.link_flags = {
      "-nostdlib", "-Wl,-z,noseparate-code", "-Wl,--build-id=none", "-Wl,--hash-style=gnu", "-Wl,-z,norelro", "-s"};
  return MakeHostCodeModule(code);
}

Module Factory(const std::string& json, NamedTensors params, Module lib, const std::string& name = "default") {
  return Must(MakeGraphExecutorFactory(json, std::move(params), std::move(lib), name), "factory");
}

std::string Payload(const Module& root) { return Must(SerializeModuleTree(root), "serialize").payload; }

std::string FactoryPayloadBytes(const Module& factory) {
  BinaryWriter w(8);
  Must(factory->SaveToBinary(&w), "factory payload");
  return w.bytes();
}

// TVM's layout of a factory payload: no alignment pads, params in the given order.
std::string TvmFactoryPayload(const std::string& json, const NamedTensors& params, const std::string& module_name) {
  BinaryWriter w;
  w.WriteString(json);
  Must(WriteNamedTensorSection(params, &w, /*align_data=*/false, /*leading_count=*/true), "tvm factory payload");
  w.WriteString(module_name);
  return w.bytes();
}

void WriteBlobSeeds(std::vector<std::pair<std::string, std::string>>* elf_payloads) {
  const std::string target = "blob_fuzzer";
  auto add = [&](const std::string& name, const std::string& payload, bool as_elf) {
    Write(target, name + ".blob", MakeBlobBytes(payload));
    if (as_elf) elf_payloads->emplace_back(name, payload);
  };
  // factory -> _lib
  add("factory_lib", Payload(Factory(MlpJson(), MlpParams(), TinyHost())), true);
  // factory -> _lib -> opencl
  {
    Module host = TinyHost();
    Must(host.Import(OpenclModule(true)), "import");
    add("factory_lib_opencl", Payload(Factory(HeteroJson(), {}, host)), true);
  }
  // factory -> _lib -> cuda (ptx), cuda (cubin), cuda (fatbin)
  for (const char* fmt : {"ptx", "cubin", "fatbin"}) {
    Module host = TinyHost();
    Must(host.Import(CudaModule(fmt)), "import");
    add(std::string("factory_lib_cuda_") + fmt, Payload(Factory(ChainJson(), {}, host)), std::string(fmt) == "ptx");
  }
  // factory -> _lib -> {opencl (whole source), cuda fatbin}
  {
    Module host = TinyHost();
    Must(host.Import(OpenclModule(false)), "import");
    Must(host.Import(CudaModule("fatbin")), "import");
    add("factory_lib_opencl_cuda", Payload(Factory(DtypesJson(), {}, host)), false);
  }
  // TVM-style graph and unaligned params (hand-written payload), spec example layout.
  {
    NamedTensors params = {{"p0", MakeTensor({}, Float32(), 3)}};
    std::string factory = TvmFactoryPayload(kTvmStyleJson, params, "default");
    BinaryWriter w;
    w.WriteU64(4);
    w.WriteString("GraphExecutorFactory");
    w.WriteBytes(factory.data(), factory.size());
    w.WriteString("_lib");
    w.WriteString("cuda");
    std::string cuda = DevicePayloadBytes(CudaPayload("cubin"));
    w.WriteBytes(cuda.data(), cuda.size());
    w.WriteString("_import_tree");
    w.WriteU64Vector({0, 1, 2, 2});
    w.WriteU64Vector({1, 2});
    add("spec_example_cuda", w.bytes(), false);
  }
  // The legacy factory key.
  {
    std::string factory = TvmFactoryPayload(MlpJson(), MlpParams(), "default");
    BinaryWriter w;
    w.WriteU64(3);
    w.WriteString("GraphRuntimeFactory");
    w.WriteBytes(factory.data(), factory.size());
    w.WriteString("_lib");
    w.WriteString("_import_tree");
    w.WriteU64Vector({0, 1, 1});
    w.WriteU64Vector({1});
    add("graph_runtime_factory", w.bytes(), false);
  }
  // The library itself as the root, importing a device module.
  {
    Module host = TinyHost();
    Must(host.Import(OpenclModule(true)), "import");
    add("lib_root_opencl", Payload(host), true);
  }
  // Legacy layout (pre-v0.7): no _lib, no _import_tree; every module hangs off the library.
  {
    BinaryWriter w;
    w.WriteU64(2);
    w.WriteString("opencl");
    std::string cl = DevicePayloadBytes(OpenclPayload(false));
    w.WriteBytes(cl.data(), cl.size());
    w.WriteString("cuda");
    std::string cuda = DevicePayloadBytes(CudaPayload("ptx"));
    w.WriteBytes(cuda.data(), cuda.size());
    add("legacy_flat", w.bytes(), true);
  }
  {
    BinaryWriter w;
    w.WriteU64(0);
    add("empty", w.bytes(), false);
  }
}

// ---------------------------------------------------------------------------------------------------

void WriteFactorySeeds() {
  const std::string target = "factory_payload_fuzzer";
  Write(target, "mlp_aligned.bin", FactoryPayloadBytes(Factory(MlpJson(), MlpParams(), Module())));
  Write(target, "chain_no_params.bin", FactoryPayloadBytes(Factory(ChainJson(), {}, Module())));
  Write(target, "mlp_tvm_layout.bin", TvmFactoryPayload(MlpJson(), MlpParams(), "default"));
  NamedTensors dtypes = {{"mask", MakeTensor({3}, Bool())},
                         {"h", MakeTensor({2, 2}, MakeDType(kDLFloat, 16))},
                         {"i8", MakeTensor({5}, MakeDType(kDLInt, 8))},
                         {"idx", MakeTensor({2}, Int64())},
                         {"u8", MakeTensor({1, 1, 1, 3}, UInt8())}};
  Write(target, "dtypes_aligned.bin", FactoryPayloadBytes(Factory(DtypesJson(), dtypes, Module(), "mod")));
  Write(target, "tvm_style_graph.bin",
        TvmFactoryPayload(kTvmStyleJson, {{"p0", MakeTensor({}, Float32())}, {"unused", MakeTensor({0}, UInt8())}},
                          "default"));
  Write(target, "hetero.bin", FactoryPayloadBytes(Factory(HeteroJson(), {}, Module())));
}

void WriteDeviceSeeds() {
  const std::string target = "device_payload_fuzzer";
  for (const char* fmt : {"ptx", "cubin", "fatbin"}) {
    Write(target, std::string("cuda_") + fmt + ".bin", DevicePayloadBytes(CudaPayload(fmt)));
  }
  Write(target, "opencl_split.bin", DevicePayloadBytes(OpenclPayload(true)));
  Write(target, "opencl_whole.bin", DevicePayloadBytes(OpenclPayload(false)));
  DeviceModulePayload empty;
  empty.fmt = "cl";
  empty.data = "// no kernels\n";
  Write(target, "opencl_no_kernels.bin", DevicePayloadBytes(empty));
  // TVM writes FunctionInfo.name empty; a hand-made one with the name filled in.
  DeviceModulePayload named = CudaPayload("ptx");
  for (auto& kv : named.functions) kv.second.name = kv.first;
  Write(target, "cuda_named_infos.bin", DevicePayloadBytes(named));
}

void WriteGraphSeeds() {
  const std::string target = "graph_json_fuzzer";
  Write(target, "mlp.json", MlpJson());
  Write(target, "chain_nop_sharing.json", ChainJson());
  Write(target, "hetero_device_index.json", HeteroJson());
  Write(target, "dtypes.json", DtypesJson());
  Write(target, "tvm_style.json", kTvmStyleJson);
  Write(target, "identity.json", kIdentityJson);
}

void WriteParamsSeeds() {
  const std::string target = "params_fuzzer";
  // The names and shapes of the params harness executor (fuzz_targets.cc).
  NamedTensors all = {{"data", MakeTensor({1, 8}, Float32())}, {"w", MakeTensor({4, 8}, Float32(), 2)},
                      {"bias", MakeTensor({4}, Float32(), 3)}, {"idx", MakeTensor({2}, Int64(), 4)},
                      {"mask", MakeTensor({3}, Bool(), 5)},    {"h", MakeTensor({2, 2}, MakeDType(kDLFloat, 16), 6)}};
  auto dict = [](const NamedTensors& params, bool align) {
    BinaryWriter w;
    Must(WriteParamsDict(params, &w, align), "params");
    return w.bytes();
  };
  Write(target, "harness_all.params", dict(all, false));
  Write(target, "harness_all_aligned.params", dict(all, true));
  Write(target, "w_bias.params", dict({all[1], all[2]}, false));
  Write(target, "empty.params", dict({}, false));
  Write(target, "unknown_name.params", dict({{"not_an_input", MakeTensor({2}, Int32())}}, false));
  Write(target, "scalar_and_empty.params",
        dict({{"s", MakeTensor({}, MakeDType(kDLFloat, 64))}, {"z", MakeTensor({0, 4}, Float32())}}, true));
}

void WriteNpySeeds() {
  const std::string target = "npy_fuzzer";
  struct Item {
    const char* name;
    std::vector<int64_t> shape;
    DLDataType dtype;
  };
  const Item items[] = {
      {"f32_2x3.npy", {2, 3}, Float32()},        {"f16_4.npy", {4}, MakeDType(kDLFloat, 16)},
      {"i64_scalar.npy", {}, Int64()},           {"bool_5.npy", {5}, Bool()},
      {"u8_1x1x2x2.npy", {1, 1, 2, 2}, UInt8()}, {"f64_empty.npy", {0, 3}, MakeDType(kDLFloat, 64)},
  };
  for (const Item& item : items) {
    Tensor t = MakeTensor(item.shape, item.dtype);
    Write(target, item.name, Must(SerializeNpy(*t.dl()), "npy"));
  }
  // Hand-written headers: version 2.0 and 3.0, double quotes, no trailing comma, Python 2 long.
  auto npy = [](int major, const std::string& dict, const std::string& data) {
    std::string h = dict;
    while ((10 + (major == 1 ? 0 : 2) + h.size() + 1) % 16 != 0) h += ' ';
    h += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    uint32_t n = static_cast<uint32_t>(h.size());
    out += static_cast<char>(n & 0xff);
    out += static_cast<char>((n >> 8) & 0xff);
    if (major != 1) {
      out += static_cast<char>((n >> 16) & 0xff);
      out += static_cast<char>((n >> 24) & 0xff);
    }
    return out + h + data;
  };
  Write(target, "v2_i32.npy",
        npy(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\x01')));
  Write(target, "v3_u16.npy",
        npy(3, "{\"shape\": (1L, 2L), \"descr\": \"=u2\", \"fortran_order\": False}", std::string(4, '\x02')));
  Write(target, "i8_pipe.npy", npy(1, "{'descr':'|i1','fortran_order':False,'shape':(3,)}", "abc"));
}

// Octal digits, zero-padded to `digits`, NUL-terminated, into `field`.
void Octal(char* field, size_t digits, uint64_t value) {
  for (size_t i = digits; i > 0; --i) {
    field[i - 1] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  field[digits] = '\0';
}

// A ustar header block by hand (for GNU long names and pax records, which TarWriter does not write).
std::string TarHeader(const std::string& name, uint64_t size, char type, bool gnu_magic) {
  char h[kTarBlockSize];
  std::memset(h, 0, sizeof(h));
  std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
  Octal(h + 100, 7, 0644);
  Octal(h + 108, 7, 0);
  Octal(h + 116, 7, 0);
  Octal(h + 124, 11, size);
  Octal(h + 136, 11, 0);
  h[156] = type;
  std::memcpy(h + 257,
              gnu_magic ? "ustar  \0"
                        : "ustar\0"
                          "00",
              8);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  Octal(h + 148, 6, sum);
  h[155] = ' ';
  return std::string(h, sizeof(h));
}

// One pax record, "<length> <key>=<value>\n", where <length> counts the whole record.
std::string PaxRecord(const std::string& key, const std::string& value) {
  const std::string body = " " + key + "=" + value + "\n";
  size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

std::string Padded(const std::string& s) {
  return s + std::string((kTarBlockSize - s.size() % kTarBlockSize) % kTarBlockSize, '\0');
}

void WriteTarSeeds() {
  const std::string target = "tar_fuzzer";
  {
    TarWriter w;
    Must(w.AddFile("lib0.o",
                   "\x7f"
                   "ELF not really an object"),
         "tar");
    Must(w.AddFile("devc.o", std::string(700, 'x'), 0600), "tar");
    Write(target, "two_files.tar", w.Finish());
  }
  {
    TarWriter w;
    std::string dir(120, 'd');
    Must(w.AddFile(dir + "/nested/name_split_across_prefix.o", "payload"), "tar");
    Must(w.AddFile("empty.o", ""), "tar");
    Write(target, "long_prefix_name.tar", w.Finish());
  }
  {
    // GNU tar: ././@LongLink, a directory entry, then the file; one trailing zero block.
    std::string long_name = std::string(150, 'g') + ".o";
    std::string a = TarHeader("././@LongLink", long_name.size() + 1, 'L', true) + Padded(long_name + '\0');
    a += TarHeader("dir/", 0, '5', true);
    a += TarHeader("placeholder", 5, '0', true) + Padded("hello");
    a += std::string(kTarBlockSize, '\0');
    Write(target, "gnu_longlink.tar", a);
  }
  {
    // pax: an extended header with path and size, a global header, then the file.
    std::string records = PaxRecord("path", "pax/dir/renamed_file.o") + PaxRecord("size", "12");
    std::string global = PaxRecord("comment", "sorun seed");
    std::string a = TarHeader("pax_global_header", global.size(), 'g', false) + Padded(global);
    a += TarHeader("PaxHeaders/x", records.size(), 'x', false) + Padded(records);
    a += TarHeader("x", 12, '0', false) + Padded("twelve bytes");
    a += std::string(2 * kTarBlockSize, '\0');
    Write(target, "pax_path_size.tar", a);
  }
}

// ---------------------------------------------------------------------------------------------------
// Whole libraries. elf_inject_fuzzer: a small real library + a blob payload. model_load_fuzzer: a blob
// payload for the zoo's kernel library (testdata/kernels/libnn_kernels_gnu_hash.so) behind the
// 32-byte symbol header of fuzz/fuzz_targets_load.cc.

std::string U16(uint16_t v) { return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)}; }

std::string U64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}

// Zoo-like models over nn_kernels.c's operators, small enough for the fuzzers' -max_len.
std::string ZooMlpJson() {
  GraphBuilder b;
  int x = b.Input("data", {1, 8});
  int h = b.Op("sorun_dense_bias_relu", {x, b.Input("fc1_w", {4, 8}), b.Input("fc1_b", {4})}, {1, 4}, Float32(), "fc1");
  int o = b.Op("sorun_dense_bias", {h, b.Input("fc2_w", {3, 4}), b.Input("fc2_b", {3})}, {1, 3}, Float32(), "fc2");
  b.Output(b.Op("sorun_softmax", {o}, {1, 3}, Float32(), "softmax"));
  return Must(b.BuildJson(), "zoo mlp graph");
}

NamedTensors ZooMlpParams() {
  return {{"fc1_w", MakeTensor({4, 8}, Float32(), 1)},
          {"fc1_b", MakeTensor({4}, Float32(), 2)},
          {"fc2_w", MakeTensor({3, 4}, Float32(), 3)},
          {"fc2_b", MakeTensor({3}, Float32(), 4)}};
}

// conv + pool + flatten (__nop) + dense + softmax, like the zoo's CNN.
std::string ZooCnnJson() {
  GraphBuilder b;
  int x = b.Input("data", {1, 1, 6, 6});
  int c = b.Op("sorun_conv2d_bias_relu_nchw", {x, b.Input("conv_w", {2, 1, 3, 3}), b.Input("conv_b", {2})},
               {1, 2, 4, 4}, Float32(), "conv");
  int p = b.Op("sorun_max_pool2d", {c}, {1, 2, 2, 2}, Float32(), "pool");
  int f = b.Reshape(p, {1, 8}, "flatten_nop");
  int o = b.Op("sorun_dense_bias", {f, b.Input("fc_w", {3, 8}), b.Input("fc_b", {3})}, {1, 3}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {o}, {1, 3}, Float32(), "softmax"));
  return Must(b.BuildJson(), "zoo cnn graph");
}

NamedTensors ZooCnnParams() {
  return {{"conv_w", MakeTensor({2, 1, 3, 3}, Float32(), 5)},
          {"conv_b", MakeTensor({2}, Float32(), 6)},
          {"fc_w", MakeTensor({3, 8}, Float32(), 7)},
          {"fc_b", MakeTensor({3}, Float32(), 8)}};
}

// A residual block: conv, bias_add, add (skip connection), relu, global pool, dense, softmax.
std::string ZooResblockJson() {
  GraphBuilder b;
  int x = b.Input("data", {1, 2, 4, 4});
  int c = b.Op("sorun_conv2d_nchw", {x, b.Input("conv_w", {2, 2, 3, 3})}, {1, 2, 4, 4}, Float32(), "conv");
  int ba = b.Op("sorun_bias_add", {c, b.Input("conv_b", {2})}, {1, 2, 4, 4}, Float32(), "bias");
  int sum = b.Op("sorun_add", {ba, x}, {1, 2, 4, 4}, Float32(), "residual");
  int r = b.Op("sorun_relu", {sum}, {1, 2, 4, 4}, Float32(), "relu");
  int gap = b.Op("sorun_global_avg_pool2d", {r}, {1, 2, 1, 1}, Float32(), "gap");
  int f = b.Reshape(gap, {1, 2}, "flatten_nop");
  int o = b.Op("sorun_dense_bias", {f, b.Input("fc_w", {3, 2}), b.Input("fc_b", {3})}, {1, 3}, Float32(), "fc");
  b.Output(b.Op("sorun_softmax", {o}, {1, 3}, Float32(), "softmax"));
  return Must(b.BuildJson(), "zoo resblock graph");
}

NamedTensors ZooResblockParams() {
  return {{"conv_w", MakeTensor({2, 2, 3, 3}, Float32(), 9)},
          {"conv_b", MakeTensor({2}, Float32(), 10)},
          {"fc_w", MakeTensor({3, 2}, Float32(), 11)},
          {"fc_b", MakeTensor({3}, Float32(), 12)}};
}

// A chain of empty kernels with intermediate storage reuse (the zoo's chain10k, shortened).
std::string ZooChainJson() {
  GraphBuilder b;
  int x = b.Input("data", {1, 16});
  for (int i = 0; i < 12; ++i) x = b.Op("sorun_empty", {x}, {1, 16}, Float32(), "empty" + std::to_string(i));
  b.Output(x);
  return Must(b.BuildJson(), "zoo chain graph");
}

// One model_load_fuzzer input: flags, the three override values, then the payload.
std::string LoadInput(uint8_t flags, const std::string& payload, uint64_t prefix = 0, uint64_t st_size = 0,
                      uint64_t st_value_delta = 0) {
  return std::string(1, static_cast<char>(flags)) + std::string(7, '\0') + U64(prefix) + U64(st_size) +
         U64(st_value_delta) + payload;
}

// The __tvm_dev_mblob payload of a packed model library (e.g. the zoo's digits.so).
std::string PayloadOfLibrary(const std::string& path) {
  ElfImage image = Must(ElfImage::ReadFile(path), "reading " + path);
  ElfSymbolData blob = Must(image.FindSymbolData("__tvm_dev_mblob"), path);
  if (blob.size < 8) Die(path, DataLoss("blob symbol too small"));
  return std::string(reinterpret_cast<const char*>(blob.data) + 8, blob.size - 8);
}

void WriteModelLoadSeeds(const std::vector<std::string>& zoo_libraries) {
  const std::string target = "model_load_fuzzer";
  constexpr uint8_t kChecksum = 1, kVerify = 2, kPrefix = 4, kSize = 8, kValue = 16;
  const std::string mlp = Payload(Factory(ZooMlpJson(), ZooMlpParams(), TinyHost()));
  Write(target, "zoo_mlp.bin", LoadInput(kChecksum | kVerify, mlp));
  Write(target, "zoo_cnn.bin",
        LoadInput(kChecksum | kVerify, Payload(Factory(ZooCnnJson(), ZooCnnParams(), TinyHost()))));
  Write(target, "zoo_resblock.bin",
        LoadInput(kChecksum, Payload(Factory(ZooResblockJson(), ZooResblockParams(), TinyHost()))));
  Write(target, "zoo_chain.bin", LoadInput(0, Payload(Factory(ZooChainJson(), {}, TinyHost()))));
  {
    Module host = TinyHost();
    Must(host.Import(OpenclModule(true)), "import");
    Write(target, "zoo_hetero_opencl.bin", LoadInput(kChecksum | kVerify, Payload(Factory(HeteroJson(), {}, host))));
  }
  {
    Module host = TinyHost();
    Must(host.Import(OpenclModule(true)), "import");
    Write(target, "lib_root_opencl.bin", LoadInput(0, Payload(host)));
  }
  // The symbol fields set to their true values, so mutations start from them: the exact prefix,
  // the exact st_size, st_size 0 ("size unknown": the prefix decides), st_value moved by 0.
  Write(target, "zoo_mlp_exact_fields.bin", LoadInput(kPrefix | kSize | kValue, mlp, mlp.size(), mlp.size() + 8, 0));
  Write(target, "zoo_mlp_size_unknown.bin", LoadInput(kSize, mlp, 0, 0));
  for (const std::string& path : zoo_libraries) {
    std::string payload = PayloadOfLibrary(path);
    if (payload.size() + 32 > 16384) continue;  // the fuzzers' -max_len
    Write(target, "zoo_" + fs::path(path).stem().string() + "_packed.bin", LoadInput(kChecksum | kVerify, payload));
  }
}

// A small real library (TinyHost's code) linked with `extra` flags, with a blob when `payload` is set.
std::string TinyLibrary(const std::string& tmp, const std::string& name, const std::vector<std::string>& extra,
                        const std::string* payload = nullptr) {
  HostCode code;
  code.files = {g_tiny_c};
  code.link_flags = {"-nostdlib", "-Wl,-z,noseparate-code", "-Wl,-z,norelro"};
  code.link_flags.insert(code.link_flags.end(), extra.begin(), extra.end());
  ExportOptions options;
  options.write_checksum = payload != nullptr;
  const std::string so = tmp + "/inject_" + name + ".so";
  Must(LinkLibraryWithBlob(payload, {code}, so, options), "linking " + name);
  return Must(ReadFileToString(so), "read");
}

void WriteElfInjectSeeds(const std::string& tmp) {
  const std::string target = "elf_inject_fuzzer";
  constexpr uint8_t kChecksum = 1, kReplace = 2, kRaw = 4, kFile = 8;
  auto input = [](uint8_t flags, const std::string& elf, const std::string& rest) {
    if (elf.size() > 0xffff) Die("elf_inject seed", InvalidArgument("library too large"));
    return std::string(1, static_cast<char>(flags)) + U16(static_cast<uint16_t>(elf.size())) + elf + rest;
  };
  const std::string mlp = Payload(Factory(ZooMlpJson(), ZooMlpParams(), TinyHost()));
  const std::string gnu = TinyLibrary(tmp, "gnu", {"-Wl,--hash-style=gnu", "-Wl,--build-id=none", "-s"});
  Write(target, "gnu_hash_checksum_file.bin", input(kChecksum | kFile, gnu, mlp));
  Write(target, "sysv_hash.bin", input(0, TinyLibrary(tmp, "sysv", {"-Wl,--hash-style=sysv", "-s"}), mlp));
  Write(target, "both_hash_build_id.bin",
        input(kChecksum, TinyLibrary(tmp, "both", {"-Wl,--hash-style=both", "-Wl,--build-id=sha1", "-s"}), mlp));
  Write(target, "symtab_kept.bin", input(kChecksum, TinyLibrary(tmp, "symtab", {"-Wl,--hash-style=gnu"}), ""));
  Write(target, "raw_blob.bin", input(kRaw, gnu, MakeBlobBytes("\x01\x02\x03")));
  // Already packed: refused without replace_existing, replaced with it (a new checksum record).
  const std::string packed = TinyLibrary(tmp, "packed", {"-Wl,--hash-style=gnu", "-s"}, &mlp);
  Write(target, "already_packed.bin", input(0, packed, mlp));
  Write(target, "already_packed_replace.bin", input(kChecksum | kReplace, packed, mlp));
}

void WriteElfSeeds(const std::vector<std::pair<std::string, std::string>>& payloads, const std::string& tmp) {
  const std::string target = "elf_inspect_fuzzer";
  std::vector<HostCode> host = {static_cast<const HostCodeModuleNode*>(TinyHost().get())->code()};
  for (const auto& [name, payload] : payloads) {
    std::string so = tmp + "/" + name + ".so";
    Must(LinkLibraryWithBlob(&payload, host, so), "linking " + name);
    Write(target, name + ".so", Must(ReadFileToString(so), "read"));
  }
  const std::string& first = payloads.front().second;
  // The C-source embedding route, and no checksum record.
  ExportOptions c_route;
  c_route.embedding = BlobEmbedding::kCSource;
  c_route.write_checksum = false;
  Must(LinkLibraryWithBlob(&first, host, tmp + "/c_route.so", c_route), "linking c route");
  Write(target, "c_route_no_checksum.so", Must(ReadFileToString(tmp + "/c_route.so"), "read"));
  // A plain kernel library without a blob.
  Must(LinkLibraryWithBlob(nullptr, host, tmp + "/plain.so"), "linking plain");
  Write(target, "plain_no_blob.so", Must(ReadFileToString(tmp + "/plain.so"), "read"));
  // The blob object itself (ET_REL: st_value is a section offset), with its symbol table.
  ExportOptions keep;
  keep.work_dir = tmp + "/work";
  Must(LinkLibraryWithBlob(&first, host, tmp + "/kept.so", keep), "linking kept");
  Write(target, "devc_object.o", Must(ReadFileToString(keep.work_dir + "/devc.o"), "read"));
  // The .tar export (objects + blob object) is a tar seed.
  Must(LinkLibraryWithBlob(&first, host, tmp + "/model.tar"), "tar export");
  Write("tar_fuzzer", "export.tar", Must(ReadFileToString(tmp + "/model.tar"), "read"));
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_corpus OUT_DIR [PACKED_ZOO_MODEL.so...]\n");
    return 2;
  }
  g_out = argv[1];
  // Device modules are created without any driver work; no OpenCL platform is needed.
  setenv("OCL_ICD_VENDORS", "/nonexistent/sorun-make-corpus", 0);
  TempDir tmp = Must(TempDir::Create("sorun_make_corpus"), "temp dir");
  g_tiny_c = tmp.path() + "/tiny_kernels.c";
  Must(WriteFileBytes(g_tiny_c, "int sorun_fuzz_seed_kernel(void* args, int* codes, int n) { return n; }\n"),
       "tiny kernel source");
  std::vector<std::pair<std::string, std::string>> elf_payloads;
  WriteBlobSeeds(&elf_payloads);
  WriteFactorySeeds();
  WriteDeviceSeeds();
  WriteGraphSeeds();
  WriteParamsSeeds();
  WriteNpySeeds();
  WriteTarSeeds();
  WriteElfSeeds(elf_payloads, tmp.path());
  WriteElfInjectSeeds(tmp.path());
  WriteModelLoadSeeds(std::vector<std::string>(argv + 2, argv + argc));
  std::printf("make_corpus: wrote %d seeds under %s\n", g_files, g_out.c_str());
  return 0;
}

}  // namespace
}  // namespace sorun

int main(int argc, char** argv) { return sorun::Main(argc, argv); }
