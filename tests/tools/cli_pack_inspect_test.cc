// `sorun pack` and `sorun inspect` end to end through the built binary: models packed from C sources,
// .tar libraries, OpenCL and CUDA device code; inspect's text and JSON (parsed with RapidJSON); pack's
// error handling; and proof that inspect never loads the library it reads.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <set>

#include "format/elf_preflight.h"
#include "format/tar_archive.h"
#include "tests/tools/cli_test_util.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::IsOneErrorLine;
using testing::RunSorun;

class CliPackInspectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(testing::MakeTempDir("cli_pack"));
    files_ = new testing::SmallModelFiles(testing::WriteSmallModel(*dir_));
    cl_ = new testing::OpenclModelFiles(testing::WriteOpenclModel(*dir_, 100));
    CliResult r = Pack({"-o", Model(), "--graph", files_->graph, "--params", files_->params});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
  }
  static void TearDownTestSuite() {
    delete cl_;
    delete files_;
    delete dir_;
  }
  static std::string Model() { return *dir_ + "/model.so"; }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  // `sorun pack ARGS --lib nn_kernels.c`.
  static CliResult Pack(std::vector<std::string> args, const std::string& lib = testing::NnKernelsSource()) {
    args.insert(args.begin(), "pack");
    args.insert(args.end(), {"--lib", lib});
    return RunSorun(args);
  }
  static rapidjson::Document InspectJson(const std::string& path) {
    CliResult r = RunSorun({"inspect", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one JSON object on one line";
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_FALSE(doc.HasParseError()) << r.out;
    EXPECT_TRUE(doc.IsObject()) << r.out;
    return doc;
  }
  static void ExpectPackError(const std::vector<std::string>& args, const std::vector<std::string>& parts,
                              const std::string& lib = testing::NnKernelsSource(), int code = 1) {
    CliResult r = Pack(args, lib);
    EXPECT_EQ(r.exit_code, code) << Describe(r);
    EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
    for (const std::string& p : parts)
      EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "'\n" << Describe(r);
  }

  static std::string* dir_;
  static testing::SmallModelFiles* files_;
  static testing::OpenclModelFiles* cl_;
};

std::string* CliPackInspectTest::dir_ = nullptr;
testing::SmallModelFiles* CliPackInspectTest::files_ = nullptr;
testing::OpenclModelFiles* CliPackInspectTest::cl_ = nullptr;

std::vector<std::string> Strings(const rapidjson::Value& v) {
  std::vector<std::string> out;
  for (const auto& s : v.GetArray()) out.push_back(s.GetString());
  return out;
}

std::vector<int64_t> Shape(const rapidjson::Value& v) {
  std::vector<int64_t> out;
  for (const auto& d : v.GetArray()) out.push_back(d.GetInt64());
  return out;
}

TEST_F(CliPackInspectTest, PackReportsWhatItWrote) {
  CliResult r = Pack({"-o", Path("again.so"), "--graph", files_->graph, "--params", files_->params});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("wrote " + Path("again.so")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[0] GraphExecutorFactory, [1] _lib"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checksum  xxh64 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 tensors, 144 B"), std::string::npos) << r.out;
  // Packing is deterministic: the same inputs give the same blob.
  EXPECT_EQ(RunSorun({"verify", Path("again.so")}).out.substr(Path("again.so").size()),
            RunSorun({"verify", Model()}).out.substr(Model().size()));
}

TEST_F(CliPackInspectTest, InspectText) {
  CliResult r = RunSorun({"inspect", Model()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.err, "");
  // The model was packed here, for this machine's architecture.
  EXPECT_NE(r.out.find(ElfMachineName(HostElfMachine()) + " shared object"), std::string::npos) << r.out;
  for (const char* part : {"packed model",
                           "__tvm_dev_mblob in",
                           "import_tree layout",
                           "__sorun_blob_checksum present",
                           "matches the blob",
                           "GraphExecutorFactory",
                           "_lib",
                           "the kernel library",
                           "5 nodes (3 inputs, 2 operators)",
                           "data  float32  [1, 8]",
                           "w     float32  [4, 8]  param",
                           "bias  float32  [4]     param",
                           "softmax  float32  [1, 4]",
                           "2 tensors, 144 B",
                           "alignment pads (__sorun_pad_*) not counted",
                           "kernels  sorun_dense_bias_relu, sorun_softmax",
                           "memory plan",
                           "cpu:0  params  144 B",
                           "\ndevices needed: cpu (no device module)\n",
                           "exported functions"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing '" << part << "' in\n" << r.out;
  }
}

TEST_F(CliPackInspectTest, InspectJson) {
  rapidjson::Document doc = InspectJson(Model());
  EXPECT_STREQ(doc["kind"].GetString(), "packed_model");
  EXPECT_STREQ(doc["format"].GetString(), "import_tree");
  const auto& modules = doc["modules"];
  ASSERT_EQ(modules.Size(), 2u);
  EXPECT_EQ(modules[0]["index"].GetUint64(), 0u);
  EXPECT_STREQ(modules[0]["type_key"].GetString(), "GraphExecutorFactory");
  EXPECT_EQ(modules[0]["children"].Size(), 1u);
  EXPECT_EQ(modules[0]["children"][0].GetUint64(), 1u);
  EXPECT_GT(modules[0]["payload_bytes"].GetUint64(), 144u);
  EXPECT_STREQ(modules[1]["type_key"].GetString(), "_lib");
  EXPECT_EQ(modules[1]["payload_bytes"].GetUint64(), 0u);
  // Inputs exclude the params.
  ASSERT_EQ(doc["inputs"].Size(), 1u);
  EXPECT_STREQ(doc["inputs"][0]["name"].GetString(), "data");
  EXPECT_EQ(Shape(doc["inputs"][0]["shape"]), (std::vector<int64_t>{1, 8}));
  EXPECT_STREQ(doc["inputs"][0]["dtype"].GetString(), "float32");
  ASSERT_EQ(doc["outputs"].Size(), 1u);
  EXPECT_STREQ(doc["outputs"][0]["name"].GetString(), "softmax");
  EXPECT_EQ(Shape(doc["outputs"][0]["shape"]), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(doc["params"]["count"].GetUint64(), 2u);
  EXPECT_EQ(doc["params"]["bytes"].GetUint64(), 144u);
  EXPECT_GE(doc["params"]["alignment_pads"].GetUint64(), 1u);
  std::set<std::string> names;
  for (const auto& t : doc["params"]["tensors"].GetArray()) names.insert(t["name"].GetString());
  EXPECT_EQ(names, (std::set<std::string>{"w", "bias"}));
  EXPECT_EQ(doc["graph"]["nodes"].GetUint64(), 5u);
  EXPECT_EQ(doc["graph"]["op_nodes"].GetUint64(), 2u);
  EXPECT_STREQ(doc["graph"]["module_name"].GetString(), "default");
  EXPECT_EQ(doc["graph"]["missing_kernels"].Size(), 0u);
  ASSERT_EQ(doc["memory_plan"].Size(), 1u);
  EXPECT_STREQ(doc["memory_plan"][0]["device"].GetString(), "cpu:0");
  EXPECT_EQ(doc["memory_plan"][0]["param_bytes"].GetUint64(), 144u);
  // data (32 B) + fc (16 B) + softmax (16 B), each in its own pool.
  EXPECT_EQ(doc["memory_plan"][0]["activation_bytes"].GetUint64(), 64u);
  EXPECT_EQ(doc["device_modules"].Size(), 0u);
  EXPECT_EQ(Strings(doc["devices_needed"]), (std::vector<std::string>{"cpu"}));
  EXPECT_TRUE(doc["checksum"]["present"].GetBool());
  EXPECT_TRUE(doc["checksum"]["valid"].GetBool());
  EXPECT_EQ(std::string(doc["checksum"]["hash"].GetString()).size(), 16u);
  std::vector<std::string> functions = Strings(doc["host_functions"]);
  EXPECT_NE(std::find(functions.begin(), functions.end(), "sorun_softmax"), functions.end());
}

TEST_F(CliPackInspectTest, TarAndCRouteAndModuleName) {
  CliResult r = Pack(
      {"-o", Path("m.tar"), "--graph", files_->graph, "--params", files_->params, "--c-route", "--module-name", "net"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("tar archive"), std::string::npos) << r.out;
  rapidjson::Document doc = InspectJson(Path("m.tar"));
  EXPECT_STREQ(doc["container"].GetString(), "tar");
  EXPECT_STREQ(doc["graph"]["module_name"].GetString(), "net");
  EXPECT_STREQ(doc["blob"]["member"].GetString(), "devc.o");
  EXPECT_TRUE(doc["checksum"]["valid"].GetBool());
  CliResult v = RunSorun({"verify", Path("m.tar")});
  EXPECT_EQ(v.exit_code, 0) << Describe(v);
  CliResult run = RunSorun({"run", Path("m.tar"), "--input", "data=" + files_->input, "--output-dir", Path("tar_out")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::vector<float> y = testing::ReadFloatNpy(Path("tar_out/output_0.npy"));
  ASSERT_EQ(y.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6);

  // --tar writes an archive whatever the name.
  r = Pack({"-o", Path("m.bin"), "--tar", "--graph", files_->graph, "--params", files_->params});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  std::string bytes = testing::ReadFileOrDie(Path("m.bin"));
  auto entries = ReadTarArchive(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "m.bin");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::set<std::string> members;
  for (const TarEntry& e : *entries) members.insert(e.name);
  EXPECT_TRUE(members.count("devc.o")) << bytes.size();
  EXPECT_FALSE(testing::FileExists(Path("m.bin.sorun_tmp.tar")));
}

TEST_F(CliPackInspectTest, NoChecksumAndKernelLibrary) {
  CliResult r = Pack({"-o", Path("nock.so"), "--graph", files_->graph, "--params", files_->params, "--no-checksum"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  rapidjson::Document doc = InspectJson(Path("nock.so"));
  EXPECT_FALSE(doc["checksum"]["present"].GetBool());
  CliResult text = RunSorun({"inspect", Path("nock.so")});
  EXPECT_NE(text.out.find("checksum  none"), std::string::npos) << text.out;

  // Without --graph and device code: a plain kernel library, no blob at all (as TVM).
  r = Pack({"-o", Path("kernels.so")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("blob  none"), std::string::npos) << r.out;
  doc = InspectJson(Path("kernels.so"));
  EXPECT_STREQ(doc["kind"].GetString(), "kernel_library");
  EXPECT_STREQ(doc["format"].GetString(), "none");
  EXPECT_TRUE(doc["graph"].IsNull());
  EXPECT_EQ(doc["modules"].Size(), 0u);
  EXPECT_GE(doc["host_functions"].Size(), 10u);
  text = RunSorun({"inspect", Path("kernels.so")});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("kernel library"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no __tvm_dev_mblob"), std::string::npos) << text.out;
}

TEST_F(CliPackInspectTest, OpenclModelPacksWithoutAPlatformAndInspects) {
  // The OpenCL module is packed from its payload alone: the command does not depend on a platform
  // (none is made visible to it here).
  CliResult r = RunSorun({"pack", "-o", Path("cl.so"), "--graph", cl_->graph, "--lib",
                          testing::OpenclHostKernelsSource(), "--opencl", cl_->source, "--opencl-fmap", cl_->fmap},
                         {{"OCL_ICD_VENDORS", "/nonexistent"}, {"OPENCL_VENDOR_PATH", "/nonexistent"}});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("[0] GraphExecutorFactory, [1] _lib, [2] opencl"), std::string::npos) << r.out;
  rapidjson::Document doc = InspectJson(Path("cl.so"));
  ASSERT_EQ(doc["modules"].Size(), 3u);
  EXPECT_EQ(doc["modules"][1]["children"][0].GetUint64(), 2u);
  ASSERT_EQ(doc["device_modules"].Size(), 1u);
  const auto& dev = doc["device_modules"][0];
  EXPECT_STREQ(dev["type_key"].GetString(), "opencl");
  EXPECT_STREQ(dev["fmt"].GetString(), "cl");
  EXPECT_EQ(dev["index"].GetUint64(), 2u);
  ASSERT_EQ(dev["kernels"].Size(), 2u);
  EXPECT_STREQ(dev["kernels"][0]["name"].GetString(), "scale");
  EXPECT_EQ(Strings(dev["kernels"][0]["arg_types"]),
            (std::vector<std::string>{"handle", "handle", "float32", "int32"}));
  EXPECT_EQ(Strings(dev["kernels"][0]["launch_param_tags"]), (std::vector<std::string>{"blockIdx.x", "threadIdx.x"}));
  EXPECT_STREQ(dev["kernels"][1]["name"].GetString(), "vadd");
  // No device_index in the graph: planned on the model's device type.
  EXPECT_STREQ(doc["memory_plan"][0]["device"].GetString(), "opencl:0");
  EXPECT_EQ(Strings(doc["devices_needed"]), (std::vector<std::string>{"opencl"}));
  CliResult text = RunSorun({"inspect", Path("cl.so")});
  EXPECT_NE(text.out.find("[2] opencl: fmt cl"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\ndevices needed: opencl (its kernels are in an OpenCL module)\n"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("vadd   (handle, handle, handle, int32)   launch blockIdx.x, threadIdx.x"), std::string::npos)
      << text.out;

  // Without a graph: a kernel library importing the OpenCL module (TVM's lib export).
  r = RunSorun({"pack", "-o", Path("cl_lib.so"), "--lib", testing::OpenclHostKernelsSource(), "--opencl", cl_->source,
                "--opencl-fmap", cl_->fmap});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  doc = InspectJson(Path("cl_lib.so"));
  ASSERT_EQ(doc["modules"].Size(), 2u);
  EXPECT_STREQ(doc["modules"][0]["type_key"].GetString(), "_lib");
  EXPECT_STREQ(doc["modules"][1]["type_key"].GetString(), "opencl");
  EXPECT_TRUE(doc["graph"].IsNull());
  EXPECT_EQ(Strings(doc["devices_needed"]), (std::vector<std::string>{"opencl"}));

  // That kernel library is what TVM's three-file deployment of an OpenCL build ships (lib.so, or lib.tar
  // with a devc.o): packing it with the graph keeps its OpenCL module, whose blob is replaced.
  r = RunSorun({"pack", "-o", Path("cl_lib.tar"), "--lib", testing::OpenclHostKernelsSource(), "--opencl", cl_->source,
                "--opencl-fmap", cl_->fmap});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* lib : {"cl_lib.so", "cl_lib.tar"}) {
    const std::string out = Path(std::string("from_") + lib + ".so");
    r = RunSorun({"pack", "-o", out, "--graph", cl_->graph, "--lib", Path(lib)});
    ASSERT_EQ(r.exit_code, 0) << lib << ": " << Describe(r);
    EXPECT_NE(r.out.find("[0] GraphExecutorFactory, [1] _lib, [2] opencl"), std::string::npos) << r.out;
    doc = InspectJson(out);
    ASSERT_EQ(doc["modules"].Size(), 3u) << lib;
    EXPECT_STREQ(doc["modules"][2]["type_key"].GetString(), "opencl");
    ASSERT_EQ(doc["device_modules"].Size(), 1u);
    EXPECT_EQ(doc["device_modules"][0]["kernels"].Size(), 2u);
    EXPECT_STREQ(doc["device_modules"][0]["kernels"][1]["name"].GetString(), "vadd");
    EXPECT_EQ(doc["graph"]["missing_kernels"].Size(), 0u);
    EXPECT_TRUE(doc["checksum"]["valid"].GetBool()) << lib;
    CliResult v = RunSorun({"verify", out});
    EXPECT_EQ(v.exit_code, 0) << Describe(v);
    EXPECT_NE(v.out.find("; devices needed: opencl)\n"), std::string::npos) << v.out;
  }
  // A deploy library (its blob holds a factory) is refused, naming the cause.
  r = RunSorun({"pack", "-o", Path("cl_refused.so"), "--graph", cl_->graph, "--lib", Path("cl.so")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("already a packed model (its blob holds a GraphExecutorFactory)"), std::string::npos) << r.err;
  EXPECT_FALSE(testing::FileExists(Path("cl_refused.so")));
}

TEST_F(CliPackInspectTest, CudaDeviceCodePacksAndInspectsWithoutAGpu) {
  // PTX text need not be valid for packing: nothing is compiled or loaded.
  testing::WriteFileOrDie(Path("k.ptx"), "// dummy PTX\n.version 7.0\n.target sm_80\n.address_size 64\n");
  testing::WriteFileOrDie(
      Path("k.json"),
      "{\"func_info\": {\"k1\": {\"name\": \"\", \"arg_types\": [\"handle\", \"float32\", \"int64\"], "
      "\"launch_param_tags\": [\"blockIdx.x\", \"threadIdx.x\", \"tir.use_dyn_shared_memory\"]}, "
      "\"k2\": {\"arg_types\": [\"handle\"], \"thread_axis_tags\": [\"blockIdx.y\"]}}}");
  // A fatbin with TVM's sidecar name (k2.tvm_meta.json found automatically).
  testing::WriteFileOrDie(Path("k2.fatbin"), std::string("\x50\xed\x55\xba\x01\x00\x10\x00", 8) + "fake fatbin");
  testing::WriteFileOrDie(
      Path("k2.tvm_meta.json"),
      "{\"tvm_version\": \"0.12.0\", \"func_info\": {\"f\": {\"name\": \"\", \"arg_types\": "
      "[\"handle\", \"int32\"], \"launch_param_tags\": [\"threadIdx.x\"], \"arg_extra_tags\": [0, 0]}}}");
  CliResult r = Pack({"-o", Path("cuda.so"), "--graph", files_->graph, "--params", files_->params, "--cuda",
                      Path("k.ptx"), "--cuda-fmap", Path("k.json")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  rapidjson::Document doc = InspectJson(Path("cuda.so"));
  ASSERT_EQ(doc["device_modules"].Size(), 1u);
  const auto& dev = doc["device_modules"][0];
  EXPECT_STREQ(dev["type_key"].GetString(), "cuda");
  EXPECT_STREQ(dev["fmt"].GetString(), "ptx");
  ASSERT_EQ(dev["kernels"].Size(), 2u);
  EXPECT_EQ(Strings(dev["kernels"][0]["launch_param_tags"]),
            (std::vector<std::string>{"blockIdx.x", "threadIdx.x", "tir.use_dyn_shared_memory"}));
  EXPECT_EQ(Strings(dev["kernels"][1]["launch_param_tags"]), (std::vector<std::string>{"blockIdx.y"}));
  EXPECT_STREQ(doc["memory_plan"][0]["device"].GetString(), "cuda:0");
  EXPECT_EQ(Strings(doc["devices_needed"]), (std::vector<std::string>{"cuda"}));
  CliResult text = RunSorun({"inspect", Path("cuda.so")});
  EXPECT_NE(text.out.find("\ndevices needed: cuda (its kernels are in a CUDA module)\n"), std::string::npos)
      << text.out;

  r = Pack({"-o", Path("cuda_lib.so"), "--cuda", Path("k2.fatbin")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  doc = InspectJson(Path("cuda_lib.so"));
  ASSERT_EQ(doc["device_modules"].Size(), 1u);
  EXPECT_STREQ(doc["device_modules"][0]["fmt"].GetString(), "fatbin");
  EXPECT_STREQ(doc["device_modules"][0]["kernels"][0]["name"].GetString(), "f");

  // Running it needs a CUDA device: exit 1 here (no driver), one line.
  CliResult run = RunSorun({"run", Path("cuda.so"), "--device", "cuda", "--input", "data=" + files_->input});
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  EXPECT_TRUE(IsOneErrorLine(run)) << Describe(run);
  // On the default device (the CPU) it is refused when the executor is asked for, naming what it needs.
  run = RunSorun({"run", Path("cuda.so"), "--input", "data=" + files_->input});
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  EXPECT_TRUE(IsOneErrorLine(run)) << Describe(run);
  EXPECT_NE(run.err.find(Path("cuda.so") +
                         ": its kernels are in a CUDA module: it needs a cuda device, the executor was given cpu:0"),
            std::string::npos)
      << run.err;
}

TEST_F(CliPackInspectTest, KernelDescriptionErrorsNameTheFileAndKernel) {
  auto fmap = [&](const std::string& name, const std::string& json) {
    testing::WriteFileOrDie(Path(name), json);
    return Path(name);
  };
  const std::string cl = cl_->source;
  const std::string host = testing::OpenclHostKernelsSource();
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap",
                   fmap("tag.json",
                        "{\"func_info\": {\"vadd\": {\"arg_types\": [\"handle\"], \"launch_param_tags\": "
                        "[\"blockIdx.w\"]}}}")},
                  {"tag.json", "vadd", "blockIdx.w"}, host);
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap",
                   fmap("type.json", "{\"func_info\": {\"scale\": {\"arg_types\": [\"float16x4\"]}}}")},
                  {"type.json", "scale"}, host);
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap", fmap("broken.json", "{\"func_info\": {")},
                  {"broken.json", "invalid JSON"}, host);
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap", fmap("nofi.json", "{\"kernels\": {}}")},
                  {"nofi.json", "unknown key \"kernels\""}, host);
  ExpectPackError(
      {"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap",
       fmap("extra.json", "{\"func_info\": {\"vadd\": {\"arg_types\": [\"handle\"], \"arg_extra_tags\": [1]}}}")},
      {"extra.json", "vadd", "arg_extra_tags"}, host);
  // The fmap and the source disagree: kernel 'vadd' only (the source has a 'scale' piece too).
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl, "--opencl-fmap",
                   fmap("one.json",
                        "{\"func_info\": {\"vadd\": {\"arg_types\": [\"handle\", \"handle\", \"handle\", "
                        "\"int32\"], \"launch_param_tags\": [\"blockIdx.x\", \"threadIdx.x\"]}}}")},
                  {"kernels.cl", "one.json", "scale"}, host);
  // No sidecar next to the device code.
  ExpectPackError({"-o", Path("x.so"), "--opencl", cl}, {"kernels.tvm_meta.json"}, host);
  EXPECT_FALSE(testing::FileExists(Path("x.so")));
}

TEST_F(CliPackInspectTest, GraphAndParamsErrors) {
  // A param the graph does not have.
  {
    std::string bytes = testing::ReadFileOrDie(files_->params);
    size_t at = bytes.find("bias");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 4, "beta");
    testing::WriteFileOrDie(Path("beta.params"), bytes);
  }
  ExpectPackError({"-o", Path("x.so"), "--graph", files_->graph, "--params", Path("beta.params")},
                  {"beta.params", "'beta' is not an input", "graph.json"});
  // A param of the wrong shape: the graph says w is [4, 8]; declare it [8, 4].
  {
    std::string graph = testing::ReadFileOrDie(files_->graph);
    size_t at = graph.find("[4, 8]") != std::string::npos ? graph.find("[4, 8]") : graph.find("[4,8]");
    ASSERT_NE(at, std::string::npos) << graph;
    graph.replace(at, graph[at + 2] == ' ' ? 6 : 5, graph[at + 2] == ' ' ? "[8, 4]" : "[8,4]");
    testing::WriteFileOrDie(Path("wshape.json"), graph);
  }
  ExpectPackError({"-o", Path("x.so"), "--graph", Path("wshape.json"), "--params", files_->params},
                  {"params.params", "'w'", "float32[4, 8]", "float32[8, 4]"});
  // A graph that is not valid.
  testing::WriteFileOrDie(Path("bad.json"), "{\"nodes\": []}");
  ExpectPackError({"-o", Path("x.so"), "--graph", Path("bad.json")}, {"bad.json"});
  // A graph kernel the host code does not export: no library is left behind.
  std::string graph = testing::ReadFileOrDie(files_->graph);
  graph.replace(graph.find("sorun_softmax"), std::string("sorun_softmax").size(), "sorun_missing_op");
  testing::WriteFileOrDie(Path("missing_op.json"), graph);
  ExpectPackError({"-o", Path("missing.so"), "--graph", Path("missing_op.json"), "--params", files_->params},
                  {"missing.so", "sorun_missing_op", "not exported"});
  EXPECT_FALSE(testing::FileExists(Path("missing.so")));
  // A source that does not compile: the compiler's output, on one line.
  testing::WriteFileOrDie(Path("broken.c"), "int broken( {\n");
  ExpectPackError({"-o", Path("x.so")}, {"broken.c"}, Path("broken.c"));
  EXPECT_FALSE(testing::FileExists(Path("x.so")));
}

TEST_F(CliPackInspectTest, AlreadyLinkedSharedLibraryIsPackedByInjection) {
  // A three-file deployment's kernel library (no blob): the graph and params are injected into it.
  CliResult made = Pack({"-o", Path("kernels_for_so.so")});
  ASSERT_EQ(made.exit_code, 0) << Describe(made);
  CliResult r = RunSorun({"pack", "-o", Path("from_so.so"), "--graph", files_->graph, "--params", files_->params,
                          "--lib", Path("kernels_for_so.so")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  CliResult run =
      RunSorun({"run", Path("from_so.so"), "--input", "data=" + files_->input, "--output-dir", Path("from_so_out")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::vector<float> y = testing::ReadFloatNpy(Path("from_so_out/output_0.npy"));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6);
  CliResult verify = RunSorun({"verify", Path("from_so.so")});
  EXPECT_EQ(verify.exit_code, 0) << Describe(verify);
  // A library that already carries a blob is refused.
  r = RunSorun({"pack", "-o", Path("twice.so"), "--graph", files_->graph, "--lib", Path("from_so.so")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("already"), std::string::npos) << r.err;
  EXPECT_FALSE(testing::FileExists(Path("twice.so")));
  // Usage errors around it: a .so cannot be mixed with other host code, and needs a graph.
  r = RunSorun({"pack", "-o", Path("y.so"), "--lib", Path("kernels_for_so.so"), "--lib", testing::NnKernelsSource(),
                "--graph", files_->graph});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  r = RunSorun({"pack", "-o", Path("y.so"), "--lib", Path("kernels_for_so.so")});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
}

TEST_F(CliPackInspectTest, TvmStyleTarLibraryAsHostCode) {
  // A three-file deployment's lib.tar: objects only.
  CliResult r = Pack({"-o", Path("objs.tar")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"pack", "-o", Path("from_tar.so"), "--graph", files_->graph, "--params", files_->params, "--lib",
                Path("objs.tar")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  CliResult run =
      RunSorun({"run", Path("from_tar.so"), "--input", "data=" + files_->input, "--output-dir", Path("from_tar_out")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::vector<float> y = testing::ReadFloatNpy(Path("from_tar_out/output_0.npy"));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6);
  // A tar that already carries a blob object (devc.o) is refused.
  r = Pack({"-o", Path("packed.tar"), "--graph", files_->graph, "--params", files_->params});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"pack", "-o", Path("y.so"), "--graph", files_->graph, "--lib", Path("packed.tar")});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(IsOneErrorLine(r)) << Describe(r);
  EXPECT_NE(r.err.find("devc.o"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("__tvm_dev_mblob"), std::string::npos) << r.err;
}

// TVM's export_library("x.tar") runs `tar -czf`: its ".tar" files are gzip-compressed. inspect, verify,
// run and pack --lib read them like plain archives.
TEST_F(CliPackInspectTest, GzipCompressedTarLikeTvmWrites) {
  if (std::system("gzip --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gzip on PATH";
  CliResult r = Pack({"-o", Path("plain_model.tar"), "--graph", files_->graph, "--params", files_->params});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = Pack({"-o", Path("plain_objs.tar")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* name : {"model", "objs"}) {
    const std::string cmd = "gzip -c '" + Path(std::string("plain_") + name + ".tar") + "' > '" +
                            Path(std::string("tvm_") + name + ".tar") + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  rapidjson::Document doc = InspectJson(Path("tvm_model.tar"));
  EXPECT_STREQ(doc["container"].GetString(), "tar");
  EXPECT_STREQ(doc["kind"].GetString(), "packed_model");
  EXPECT_STREQ(doc["blob"]["member"].GetString(), "devc.o");
  EXPECT_TRUE(doc["checksum"]["valid"].GetBool());
  CliResult v = RunSorun({"verify", Path("tvm_model.tar")});
  EXPECT_EQ(v.exit_code, 0) << Describe(v);
  CliResult run =
      RunSorun({"run", Path("tvm_model.tar"), "--input", "data=" + files_->input, "--output-dir", Path("gz_out")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  std::vector<float> y = testing::ReadFloatNpy(Path("gz_out/output_0.npy"));
  ASSERT_EQ(y.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6);
  // The three-file deployment's lib.tar as TVM writes it.
  r = RunSorun({"pack", "-o", Path("from_gz_tar.so"), "--graph", files_->graph, "--params", files_->params, "--lib",
                Path("tvm_objs.tar")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  run =
      RunSorun({"run", Path("from_gz_tar.so"), "--input", "data=" + files_->input, "--output-dir", Path("gz_tar_out")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  y = testing::ReadFloatNpy(Path("gz_tar_out/output_0.npy"));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], files_->expected[i], 1e-6);
  // A truncated compressed archive is one clear error.
  std::string gz = testing::ReadFileOrDie(Path("tvm_model.tar"));
  testing::WriteFileOrDie(Path("cut.tar"), gz.substr(0, gz.size() / 2));
  CliResult cut = RunSorun({"inspect", Path("cut.tar")});
  EXPECT_EQ(cut.exit_code, 1) << Describe(cut);
  EXPECT_TRUE(IsOneErrorLine(cut)) << Describe(cut);
  EXPECT_NE(cut.err.find("gzip: truncated"), std::string::npos) << cut.err;
}

TEST_F(CliPackInspectTest, OutputDirectoryIsCreated) {
  CliResult r = Pack({"-o", Path("deep/er/model.so"), "--graph", files_->graph, "--params", files_->params});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(testing::FileExists(Path("deep/er/model.so")));
}

// A library constructor that would create a marker file: inspect and verify read the file without
// running it; run loads it (the control).
TEST_F(CliPackInspectTest, InspectNeverLoadsTheLibrary) {
  testing::WriteFileOrDie(
      Path("marker.c"),
      "#include <stdio.h>\n#include <stdlib.h>\n"
      "__attribute__((constructor)) static void sorun_test_marker(void) {\n"
      "  const char* path = getenv(\"SORUN_TEST_MARKER\");\n"
      "  if (path) { FILE* f = fopen(path, \"w\"); if (f) { fputs(\"loaded\\n\", f); fclose(f); } }\n"
      "}\n");
  CliResult r = RunSorun({"pack", "-o", Path("marker.so"), "--graph", files_->graph, "--params", files_->params,
                          "--lib", testing::NnKernelsSource(), Path("marker.c")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string marker = Path("marker.txt");
  const std::map<std::string, std::string> env = {{"SORUN_TEST_MARKER", marker}};
  r = RunSorun({"inspect", Path("marker.so")}, env);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"inspect", Path("marker.so"), "--json"}, env);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  r = RunSorun({"verify", Path("marker.so")}, env);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_FALSE(testing::FileExists(marker)) << "inspect/verify ran the library's constructor";
  // Control: loading the library runs the constructor.
  r = RunSorun({"run", Path("marker.so"), "--input", "data=" + files_->input, "--output-dir", Path("marker_out")}, env);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(testing::FileExists(marker)) << "the control run did not load the library";
}

}  // namespace
}  // namespace sorun
