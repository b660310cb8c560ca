// InspectModelFile (inspect/model_inspector.h) on libraries exported in-process and on blobs
// assembled by hand: the import-tree and legacy layouts, device modules, constants, unknown type keys,
// tvm-ffi artifacts, integrity records and malformed ELF files. A few cases also go through the
// built binary to check the command-level behaviour (exit codes, one error line).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "backends/cuda/cuda_module.h"
#include "backends/device_module_payload.h"
#include "format/binary_writer.h"
#include "format/elf_preflight.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_builder.h"
#include "inspect/model_file.h"
#include "inspect/model_inspector.h"
#include "packer/device_payload_module.h"
#include "packer/exporter.h"
#include "packer/host_code_module.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"
#include "tools/cli/verify_command.h"

namespace sorun {
namespace {

HostCode NnKernels() {
  HostCode code;
  code.files = {testing::NnKernelsSource()};
  code.compile_flags = {testing::KernelIncludeFlag()};
  return code;
}

FunctionInfo Info(std::vector<DLDataType> args, std::vector<std::string> tags) {
  FunctionInfo info;
  info.arg_types = std::move(args);
  info.launch_param_tags = std::move(tags);
  return info;
}

DeviceModulePayload OpenclPayload() {
  DeviceModulePayload p;
  p.fmt = "cl";
  p.functions = {{"copy", Info({MakeDType(kDTypeHandle, 64), MakeDType(kDTypeHandle, 64)}, {"threadIdx.x"})}};
  p.data =
      "__kernel void copy(__global const float* a, __global float* b) { b[get_global_id(0)] = a[get_global_id(0)]; }\n";
  return p;
}

struct Graph {
  std::string json;
  NamedTensors params;
};

Graph MakeGraph(bool heterogeneous) {
  GraphBuilder b;
  int x = b.Input("data", {2, 8});
  int w = b.Input("w", {4, 8});
  int h = b.Op("sorun_dense", {x, w}, {2, 4}, Float32(), "fc");
  int y = b.Op("sorun_relu", {h}, {2, 4}, Float32(), "relu");
  int r = b.Reshape(y, {8}, "flat");
  b.Output(r);
  b.Output(h);
  if (heterogeneous) {
    for (int n : {x, w, h}) b.SetDeviceType(n, kDLCPU);
    for (int n : {y, r}) b.SetDeviceType(n, kDLOpenCL);
  }
  Graph g;
  g.json = *b.BuildJson();
  auto wt = Tensor::Empty({4, 8}, Float32(), CpuDevice());
  std::memset(wt->data(), 0, 128);
  auto extra = Tensor::Empty({3}, Int32(), CpuDevice());
  std::memset(extra->data(), 0, 12);
  g.params = {{"w", *wt}, {"unused_const", *extra}};
  return g;
}

class ModelInspectorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir("inspector"); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(ModelInspectorTest, FactoryLibraryAndDeviceModules) {
  Graph g = MakeGraph(/*heterogeneous=*/true);
  Module host = MakeHostCodeModule(NnKernels());
  auto cl = MakeOpenclPayloadModule(OpenclPayload());
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  DeviceModulePayload cuda_payload;
  cuda_payload.fmt = "ptx";
  cuda_payload.data = "// ptx\n";
  cuda_payload.functions = {{"k", Info({MakeDType(kDTypeHandle, 64), Int32()}, {"blockIdx.x", "threadIdx.x"})}};
  auto cuda = CreateCudaModule(cuda_payload);
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  ASSERT_TRUE(host.Import(*cl).ok());
  ASSERT_TRUE(host.Import(*cuda).ok());
  auto factory = MakeGraphExecutorFactory(g.json, g.params, host, "net");
  ASSERT_TRUE(factory.ok()) << factory.status().ToString();
  ASSERT_TRUE(ExportLibrary(*factory, Path("m.so")).ok());

  auto report = InspectModelFile(Path("m.so"));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const InspectReport& r = *report;
  EXPECT_EQ(r.kind, ArtifactKind::kPackedModel);
  EXPECT_EQ(r.format(), "import_tree");
  EXPECT_EQ(r.machine, ElfMachineName(HostElfMachine()));  // built here by ExportLibrary
  ASSERT_EQ(r.modules.size(), 4u);
  EXPECT_EQ(r.modules[0].type_key, "GraphExecutorFactory");
  EXPECT_EQ(r.modules[0].children, (std::vector<uint64_t>{1}));
  EXPECT_EQ(r.modules[1].type_key, "_lib");
  EXPECT_EQ(r.modules[1].children, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(r.modules[1].payload_bytes, 0u);
  ASSERT_TRUE(r.graph.has_value());
  const InspectedGraph& graph = *r.graph;
  EXPECT_EQ(graph.module_name, "net");
  EXPECT_EQ(graph.num_nodes, 5u);
  EXPECT_EQ(graph.num_op_nodes, 3u);
  ASSERT_EQ(graph.inputs.size(), 2u);
  EXPECT_FALSE(graph.inputs[0].is_param);
  EXPECT_TRUE(graph.inputs[1].is_param);
  ASSERT_EQ(graph.outputs.size(), 2u);
  EXPECT_EQ(graph.outputs[0].name, "flat");
  EXPECT_EQ(graph.outputs[0].shape, (std::vector<int64_t>{8}));
  EXPECT_EQ(graph.outputs[1].name, "fc");
  EXPECT_EQ(graph.params.size(), 2u);
  EXPECT_EQ(graph.param_bytes, 128u + 12u);
  EXPECT_EQ(graph.unused_params, (std::vector<std::string>{"unused_const"}));
  EXPECT_EQ(graph.kernels, (std::vector<std::string>{"sorun_dense", "sorun_relu"}));
  // device_index names CPU and OpenCL: one device of each, weights on the CPU.
  ASSERT_EQ(graph.memory.size(), 2u);
  EXPECT_EQ(graph.memory[0].device.device_type, kDLCPU);
  EXPECT_EQ(graph.memory[0].weight_bytes, 128u);
  EXPECT_EQ(graph.memory[0].activation_bytes, 64u + 32u);  // data + fc
  EXPECT_EQ(graph.memory[1].device.device_type, kDLOpenCL);
  EXPECT_EQ(graph.memory[1].activation_bytes, 32u);  // relu (flat aliases it)
  // Blob order: the serializer's DFS visits imports in reverse order (cuda before opencl), as TVM's.
  ASSERT_EQ(r.device_modules.size(), 2u);
  const InspectedDeviceModule& cuda_module = r.device_modules[0];
  const InspectedDeviceModule& cl_module = r.device_modules[1];
  EXPECT_EQ(cuda_module.type_key, "cuda");
  EXPECT_EQ(cuda_module.module_index, 2u);
  EXPECT_EQ(cuda_module.fmt, "ptx");
  EXPECT_EQ(cuda_module.kernels[0].name, "k");
  EXPECT_EQ(cuda_module.kernels[0].arg_types, (std::vector<std::string>{"handle", "int32"}));
  EXPECT_EQ(cuda_module.kernels[0].launch_param_tags, (std::vector<std::string>{"blockIdx.x", "threadIdx.x"}));
  EXPECT_EQ(cl_module.type_key, "opencl");
  EXPECT_EQ(cl_module.module_index, 3u);
  EXPECT_EQ(cl_module.fmt, "cl");
  EXPECT_EQ(cl_module.kernels[0].name, "copy");
  EXPECT_EQ(cl_module.kernels[0].arg_types, (std::vector<std::string>{"handle", "handle"}));
  EXPECT_TRUE(r.checksum.present);
  EXPECT_TRUE(r.checksum.valid) << r.checksum.error;
  EXPECT_NE(std::find(r.host_functions.begin(), r.host_functions.end(), "sorun_dense"), r.host_functions.end());

  // The payload-only OpenCL module writes the bytes OpenclModuleNode would: the model loads and its
  // opencl module is a real one (checked by the loader's own validation).
  auto ok = cli::VerifyModelFile(Path("m.so"));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
}

TEST_F(ModelInspectorTest, LegacyLayoutHasNoImportTree) {
  BinaryWriter w(8);
  w.WriteU64(1);
  w.WriteString("opencl");
  WriteDeviceModulePayload(OpenclPayload(), &w);
  ASSERT_TRUE(LinkLibraryWithBlob(&w.bytes(), {NnKernels()}, Path("legacy.so")).ok());
  auto r = InspectModelFile(Path("legacy.so"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format(), "legacy");
  ASSERT_EQ(r->modules.size(), 1u);
  EXPECT_EQ(r->modules[0].type_key, "opencl");
  EXPECT_TRUE(r->modules[0].children.empty());
  EXPECT_FALSE(r->graph.has_value());
  EXPECT_EQ(r->device_modules.size(), 1u);
  testing::CliResult text = testing::RunSorun({"inspect", Path("legacy.so")});
  EXPECT_EQ(text.exit_code, 0) << testing::Describe(text);
  EXPECT_NE(text.out.find("legacy layout"), std::string::npos) << text.out;
  // The JSON carries the same tree as the text: the kernel library as the root importing every module.
  testing::CliResult json = testing::RunSorun({"inspect", Path("legacy.so"), "--json"});
  EXPECT_EQ(json.exit_code, 0) << testing::Describe(json);
  EXPECT_NE(json.out.find("\"legacy_root\":{\"type_key\":\"_lib\",\"children\":[0]}"), std::string::npos) << json.out;
}

TEST_F(ModelInspectorTest, ConstLoaderAndMetadataModule) {
  BinaryWriter w(8);
  w.WriteU64(4);  // const_loader, _lib, metadata_module + _import_tree
  w.WriteString("const_loader");
  w.WriteStringVector({"c0"});
  w.WriteU64(1);
  auto c0 = Tensor::Empty({2, 2}, Float32(), CpuDevice());
  std::memset(c0->data(), 0, 16);
  ASSERT_TRUE(WriteNDArray(*c0->dl(), &w).ok());
  w.WriteStringVector({"tvmgen_default_ext0"});
  w.WriteU64(1);
  w.WriteStringVector({"c0"});
  w.WriteString("_lib");
  w.WriteString("metadata_module");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 2, 2});
  w.WriteU64Vector({1, 2});
  ASSERT_TRUE(LinkLibraryWithBlob(&w.bytes(), {NnKernels()}, Path("consts.so")).ok());
  auto r = InspectModelFile(Path("consts.so"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->constant_modules.size(), 1u);
  EXPECT_EQ(r->constant_modules[0].constants[0].name, "c0");
  EXPECT_EQ(r->constant_modules[0].constants[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r->constant_modules[0].symbols, (std::vector<std::string>{"tvmgen_default_ext0"}));
  EXPECT_EQ(r->modules[2].type_key, "metadata_module");
  EXPECT_EQ(r->modules[2].payload_bytes, 0u);
}

TEST_F(ModelInspectorTest, UnknownTypeKeyStopsTheWalkAndSaysWhatWasRead) {
  Graph g = MakeGraph(false);
  auto factory = GraphExecutorFactoryNode::Create(g.json, g.params);
  ASSERT_TRUE(factory.ok());
  BinaryWriter w(8);
  w.WriteU64(4);
  w.WriteString("GraphExecutorFactory");
  ASSERT_TRUE((*factory)->SaveToBinary(&w).ok());
  w.WriteString("_lib");
  w.WriteString("vulkan");
  w.WriteString("some vulkan payload");
  w.WriteString("_import_tree");
  w.WriteU64Vector({0, 1, 2, 2});
  w.WriteU64Vector({1, 2});
  ASSERT_TRUE(LinkLibraryWithBlob(&w.bytes(), {NnKernels()}, Path("vulkan.so")).ok());
  auto r = InspectModelFile(Path("vulkan.so"));
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("vulkan.so"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown module type key 'vulkan'"), std::string::npos) << m;
  EXPECT_NE(m.find("modules read so far: [0] GraphExecutorFactory, [1] _lib"), std::string::npos) << m;
  testing::CliResult cli = testing::RunSorun({"inspect", Path("vulkan.so")});
  EXPECT_EQ(cli.exit_code, 1) << testing::Describe(cli);
  EXPECT_TRUE(testing::IsOneErrorLine(cli)) << testing::Describe(cli);
  EXPECT_NE(cli.err.find("'vulkan'"), std::string::npos) << cli.err;
}

TEST_F(ModelInspectorTest, MalformedBlobWithAValidChecksumFailsVerify) {
  std::string payload(8, '\0');
  payload[0] = 2;  // two entries, then bytes that are no type key
  payload += " definitely not a module tree";
  ASSERT_TRUE(LinkLibraryWithBlob(&payload, {NnKernels()}, Path("garbage.so")).ok());
  auto r = InspectModelFile(Path("garbage.so"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("garbage.so"), std::string::npos) << r.status().message();
  testing::CliResult cli = testing::RunSorun({"verify", Path("garbage.so")});
  EXPECT_EQ(cli.exit_code, 1) << testing::Describe(cli);
  EXPECT_TRUE(testing::IsOneErrorLine(cli)) << testing::Describe(cli);
  EXPECT_EQ(cli.err.find("checksum"), std::string::npos)
      << "the checksum matches; the structure is the problem: " << cli.err;
}

TEST_F(ModelInspectorTest, TvmFfiArtifactsAreRecognised) {
  // A TVM 0.22+ container whose only module is the kernel library (a TIR-only build): not a Relax
  // export (tests/tools/relax_inspect_test.cc has those). Length 44; indptr [0, 0]; no children; "_lib".
  testing::WriteFileOrDie(Path("ffi.c"),
                          "const unsigned char __tvm_ffi__library_bin[52] = {44, 0, 0, 0, 0, 0, 0, 0,\n"
                          "  2, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,\n"
                          "  0, 0, 0, 0, 0, 0, 0, 0,  4, 0, 0, 0, 0, 0, 0, 0, '_', 'l', 'i', 'b'};\n"
                          "int __tvm_ffi_main(void) { return 0; }\n");
  HostCode code;
  code.files = {Path("ffi.c")};
  ASSERT_TRUE(LinkLibraryWithBlob(nullptr, {code}, Path("ffi.so")).ok());
  auto r = InspectModelFile(Path("ffi.so"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, ArtifactKind::kTvmFfi);
  EXPECT_EQ(r->ffi_symbols, (std::vector<std::string>{"__tvm_ffi__library_bin", "__tvm_ffi_main"}));
  testing::CliResult text = testing::RunSorun({"inspect", Path("ffi.so")});
  EXPECT_EQ(text.exit_code, 0) << testing::Describe(text);
  EXPECT_NE(text.out.find("TVM v0.21"), std::string::npos) << text.out;
  testing::CliResult run = testing::RunSorun({"run", Path("ffi.so")});
  EXPECT_EQ(run.exit_code, 1) << testing::Describe(run);
  EXPECT_TRUE(testing::IsOneErrorLine(run)) << testing::Describe(run);
  EXPECT_NE(run.err.find("__tvm_ffi__library_bin"), std::string::npos) << run.err;  // the loader names the blob
}

TEST_F(ModelInspectorTest, ChecksumMismatchIsReportedNotFatal) {
  Graph g = MakeGraph(false);
  auto factory = MakeGraphExecutorFactory(g.json, g.params, MakeHostCodeModule(NnKernels()));
  ASSERT_TRUE(factory.ok());
  ASSERT_TRUE(ExportLibrary(*factory, Path("m.so")).ok());
  std::string bytes = testing::ReadFileOrDie(Path("m.so"));
  // Flip a byte of the int32 constant (zeros) in the params: the structure stays valid.
  auto file = ModelFile::Open(Path("m.so"));
  ASSERT_TRUE(file.ok());
  auto clean = InspectModelFile(Path("m.so"));
  ASSERT_TRUE(clean.ok());
  ASSERT_EQ(clean->modules.size(), 2u);
  // The factory payload ends with the module name ("default": 8-byte length + 7 bytes) right before
  // the next type key; the last parameter's data (a real tensor: alignment pads come before the
  // tensors they align) ends just before that.
  const uint64_t data_end = clean->modules[1].key_offset - (8 + 7);
  bytes[file->blob()->file_offset + data_end - 1] ^= 0x7f;
  testing::WriteFileOrDie(Path("tampered.so"), bytes);
  auto r = InspectModelFile(Path("tampered.so"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->checksum.present);
  EXPECT_FALSE(r->checksum.valid);
  EXPECT_NE(r->checksum.error.find("checksum mismatch"), std::string::npos) << r->checksum.error;
  testing::CliResult text = testing::RunSorun({"inspect", Path("tampered.so")});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("DOES NOT MATCH"), std::string::npos) << text.out;
}

TEST_F(ModelInspectorTest, SegmentsPastTheEndOfTheFileAreCaughtBeforeDlopen) {
  Graph g = MakeGraph(false);
  auto factory = MakeGraphExecutorFactory(g.json, g.params, MakeHostCodeModule(NnKernels()));
  ASSERT_TRUE(factory.ok());
  ASSERT_TRUE(ExportLibrary(*factory, Path("m.so")).ok());
  std::string bytes = testing::ReadFileOrDie(Path("m.so"));
  // Grow the p_filesz of the first PT_LOAD segment beyond the file (section headers stay valid).
  uint64_t phoff;
  std::memcpy(&phoff, bytes.data() + 32, 8);
  uint16_t phentsize, phnum;
  std::memcpy(&phentsize, bytes.data() + 54, 2);
  std::memcpy(&phnum, bytes.data() + 56, 2);
  bool patched = false;
  for (uint16_t i = 0; i < phnum && !patched; ++i) {
    char* ph = bytes.data() + phoff + static_cast<uint64_t>(i) * phentsize;
    uint32_t type;
    std::memcpy(&type, ph, 4);
    if (type != 1) continue;
    uint64_t huge = bytes.size() * 4;
    std::memcpy(ph + 32, &huge, 8);
    std::memcpy(ph + 40, &huge, 8);  // p_memsz too
    patched = true;
  }
  ASSERT_TRUE(patched);
  testing::WriteFileOrDie(Path("bad_segment.so"), bytes);
  // The runtime's preflight (format/elf_preflight.h) refuses it before dlopen.
  Status s = PreflightSharedLibrary(Path("bad_segment.so"));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find("segment"), std::string::npos) << s.message();
  testing::CliResult run = testing::RunSorun({"run", Path("bad_segment.so")});
  EXPECT_EQ(run.exit_code, 1) << testing::Describe(run);
  EXPECT_TRUE(testing::IsOneErrorLine(run)) << testing::Describe(run);
}

TEST_F(ModelInspectorTest, KernelLibraryAndErrors) {
  auto r = InspectModelFile(testing::Runfile("testdata/kernels/libnn_kernels.so"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, ArtifactKind::kKernelLibrary);
  EXPECT_EQ(r->format(), "none");
  EXPECT_TRUE(r->modules.empty());
  EXPECT_GE(r->host_functions.size(), 10u);
  EXPECT_EQ(InspectModelFile(Path("absent.so")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(InspectModelFile(dir_).status().code(), StatusCode::kInvalidArgument);
  testing::WriteFileOrDie(Path("text.so"), "not elf");
  auto text = InspectModelFile(Path("text.so"));
  EXPECT_EQ(text.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(text.status().message().find("text.so"), std::string::npos);
}

}  // namespace
}  // namespace sorun
