// Model::LoadFromMemory (api/sorun.h) and the load hooks (RuntimeOptions::decrypt, ::verify_library) on
// the zoo's real models and a real Relax export: the same outputs, bit for bit, as loading the file; the
// weights mapped from the sealed memory file; the caller's buffer free to go; the file checks and their
// messages unchanged; no file written anywhere (a child process with every mount read-only); a refused
// library never mapped.
#include <dlfcn.h>
#include <link.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "tests/api/api_test_util.h"
#include "tests/util/host_build.h"
#include "tests/util/status_matchers.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace {

using testing::ReadZooBytes;
using testing::ReadZooNpy;
using testing::ZooFile;

// The raw bytes of every output of one run of `model` on `inputs`.
std::vector<std::string> RunBytes(const Model& model, const std::vector<std::pair<std::string, NDArray>>& inputs) {
  auto exec = model.NewExecutor();
  EXPECT_TRUE(exec.ok()) << exec.status().ToString();
  if (!exec.ok()) return {};
  std::vector<std::pair<std::string, const DLTensor*>> named;
  for (const auto& [name, array] : inputs) named.emplace_back(name, &array.dl());
  auto outputs = exec->Run(named);
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  if (!outputs.ok()) return {};
  std::vector<std::string> bytes;
  for (const NDArray& out : *outputs) {
    const DLTensor& t = out.dl();
    size_t n = (t.dtype.bits * t.dtype.lanes + 7) / 8;
    for (int i = 0; i < t.ndim; ++i) n *= static_cast<size_t>(t.shape[i]);
    bytes.emplace_back(static_cast<const char*>(t.data) + t.byte_offset, n);
  }
  return bytes;
}

class ZooFromMemory : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooFromMemory, OutputsAreBitIdenticalToTheFile) {
  const std::string name = GetParam();
  auto from_file = Model::Load(ZooFile(name + ".so"));
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto from_memory = Model::LoadFromMemory(ReadZooBytes(name + ".so"), {}, name + ".so");
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().ToString();
  EXPECT_EQ(from_memory->path(), name + ".so");
  EXPECT_EQ(from_memory->inputs().size(), from_file->inputs().size());
  const std::vector<std::pair<std::string, NDArray>> inputs = {{"data", ReadZooNpy(name + "_input.npy")}};
  const std::vector<std::string> expected = RunBytes(*from_file, inputs);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(RunBytes(*from_memory, inputs), expected);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFromMemory, ::testing::Values("mlp", "cnn", "resblock", "digits"));

TEST(LoadFromMemoryTest, RelaxExportFromMemoryMatchesTheFile) {
  const std::string path = testing::Runfile(testing::HostBuild("testdata/relax/dyn_batch.so"));
  auto from_file = Model::Load(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  auto from_memory = Model::LoadFromMemory(testing::ReadFileOrDie(path), {}, "dyn_batch.so");
  ASSERT_TRUE(from_memory.ok()) << from_memory.status().ToString();
  EXPECT_STREQ(from_memory->executor_kind(), "Relax VM");
  const std::vector<std::pair<std::string, NDArray>> inputs = {
      {from_file->inputs()[0].name, testing::ReadNpyArray(testing::Runfile("testdata/relax/dyn_batch.input_0.npy"))}};
  const std::vector<std::string> expected = RunBytes(*from_file, inputs);
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(RunBytes(*from_memory, inputs), expected);
}

TEST(LoadFromMemoryTest, TheCallersBufferMayGoOnceLoadReturns) {
  std::string bytes = ReadZooBytes("mlp.so");
  auto model = Model::LoadFromMemory(bytes, {}, "mlp.so");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::fill(bytes.begin(), bytes.end(), '\xcc');  // what a reused buffer would hold
  bytes.clear();
  bytes.shrink_to_fit();
  auto file_model = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(file_model.ok());
  const std::vector<std::pair<std::string, NDArray>> inputs = {{"data", ReadZooNpy("mlp_input.npy")}};
  EXPECT_EQ(RunBytes(*model, inputs), RunBytes(*file_model, inputs));
}

// The library's segments come from the memfd: /proc/self/maps names "memfd:sorun:<name>", and no path
// of a file holds the model.
TEST(LoadFromMemoryTest, TheLibraryAndItsWeightsAreMappedFromTheMemoryFile) {
  auto model = Model::LoadFromMemory(ReadZooBytes("cnn.so"), {}, "weights_check.so");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int mapped = 0;
  while (std::getline(maps, line)) {
    if (line.find("memfd:sorun:weights_check.so") != std::string::npos) ++mapped;
  }
  EXPECT_GE(mapped, 2) << "expected the library's PT_LOAD segments mapped from the memfd";
}

// Two models whose memory files get the same descriptor number (the first is gone, its number free
// again) are two models: ld.so knows a library by the /proc/self/fd/N name it was opened with.
TEST(LoadFromMemoryTest, AReusedDescriptorNumberNeverReturnsAnotherModel) {
  const std::vector<std::pair<std::string, NDArray>> mlp_in = {{"data", ReadZooNpy("mlp_input.npy")}};
  const std::vector<std::pair<std::string, NDArray>> cnn_in = {{"data", ReadZooNpy("cnn_input.npy")}};
  for (int round = 0; round < 3; ++round) {
    auto mlp = Model::LoadFromMemory(ReadZooBytes("mlp.so"), {}, "mlp.so");
    ASSERT_TRUE(mlp.ok()) << mlp.status().ToString();
    EXPECT_EQ(mlp->inputs()[1].name, "fc1_w");
    const std::vector<std::string> mlp_out = RunBytes(*mlp, mlp_in);
    auto cnn = Model::LoadFromMemory(ReadZooBytes("cnn.so"), {}, "cnn.so");
    ASSERT_TRUE(cnn.ok()) << cnn.status().ToString();
    EXPECT_NE(cnn->inputs()[1].name, "fc1_w");
    auto cnn_file = Model::Load(ZooFile("cnn.so"));
    ASSERT_TRUE(cnn_file.ok());
    EXPECT_EQ(RunBytes(*cnn, cnn_in), RunBytes(*cnn_file, cnn_in));
  }
}

// The same bytes, cut short: the same message from memory as from a file, the name in place of the path.
TEST(LoadFromMemoryTest, MalformedBytesGetTheFilesMessagesWithTheirOffsets) {
  const std::string bytes = ReadZooBytes("mlp.so");
  const std::string dir = testing::MakeTempDir("from_memory");
  for (size_t keep : {size_t{0}, size_t{10}, size_t{64}, size_t{1000}, bytes.size() / 2}) {
    const std::string cut = bytes.substr(0, keep);
    const std::string path = dir + "/cut.so";
    testing::WriteFileOrDie(path, cut);
    auto from_file = Model::Load(path);
    auto from_memory = Model::LoadFromMemory(cut, {}, path);
    ASSERT_FALSE(from_file.ok()) << keep;
    ASSERT_FALSE(from_memory.ok()) << keep;
    EXPECT_NE(from_memory.status().message().find(path + ": "), std::string::npos) << from_memory.status().ToString();
    EXPECT_EQ(from_memory.status().code(), from_file.status().code()) << keep;
    EXPECT_EQ(from_memory.status().message(), from_file.status().message()) << keep;
  }
}

int LoadedObjects() {
  int n = 0;
  dl_iterate_phdr([](struct dl_phdr_info*, size_t, void* data) { return ++*static_cast<int*>(data), 0; }, &n);
  return n;
}

TEST(LoadFromMemoryTest, ARefusingVerifierStopsTheLoadBeforeDlopen) {
  const std::string bytes = ReadZooBytes("resblock.so");
  RuntimeOptions options;
  size_t seen = 0;
  options.verify_library = [&seen](std::string_view library, const std::string&) {
    seen = library.size();
    return PermissionDenied("no signature");
  };
  const int before = LoadedObjects();
  auto refused = Model::LoadFromMemory(bytes, options, "resblock.so");
  EXPECT_ERROR(refused.status(), StatusCode::kPermissionDenied, "resblock.so: no signature");
  EXPECT_EQ(seen, bytes.size()) << "the verifier sees the library's exact bytes";
  EXPECT_EQ(LoadedObjects(), before) << "nothing was dlopen'ed";
  // The same verifier on a file: refused too, the file path named.
  auto refused_file = Model::Load(ZooFile("resblock.so"), options);
  EXPECT_ERROR(refused_file.status(), StatusCode::kPermissionDenied, ZooFile("resblock.so") + ": no signature");
  EXPECT_EQ(LoadedObjects(), before);
  // Accepting: loads.
  options.verify_library = [](std::string_view, const std::string&) { return Status::Ok(); };
  EXPECT_TRUE(Model::LoadFromMemory(bytes, options, "resblock.so").ok());
}

// A toy cipher (XOR) stands in for real decryption here (//security has AES-256-GCM): the hook gets the
// stored bytes, writes the plaintext in pieces, and the result runs like the file.
TEST(LoadFromMemoryTest, ADecryptHookWritesThePlaintextItLoads) {
  std::string stored = ReadZooBytes("mlp.so");
  for (char& c : stored) c = static_cast<char>(c ^ 0x5a);
  RuntimeOptions options;
  options.decrypt = [](std::string_view in, PlaintextSink& out, const std::string&) {
    SORUN_RETURN_IF_ERROR(out.Reserve(in.size()));
    std::string chunk;
    for (size_t at = 0; at < in.size(); at += 4096) {
      chunk.assign(in.substr(at, 4096));
      for (char& c : chunk) c = static_cast<char>(c ^ 0x5a);
      SORUN_RETURN_IF_ERROR(out.Write(chunk.data(), chunk.size()));
    }
    return Status::Ok();
  };
  size_t verified = 0;
  options.verify_library = [&verified](std::string_view library, const std::string&) {
    verified = library.size();
    return library.substr(0, 4) ==
                   "\x7f"
                   "ELF"
               ? Status::Ok()
               : PermissionDenied("not plaintext");
  };
  auto model = Model::LoadFromMemory(stored, options, "mlp.enc");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ(verified, stored.size()) << "verification runs on the decrypted bytes";
  auto file_model = Model::Load(ZooFile("mlp.so"));
  const std::vector<std::pair<std::string, NDArray>> inputs = {{"data", ReadZooNpy("mlp_input.npy")}};
  EXPECT_EQ(RunBytes(*model, inputs), RunBytes(*file_model, inputs));

  options.decrypt = [](std::string_view, PlaintextSink&, const std::string&) {
    return PermissionDenied("decryption failed: wrong key");
  };
  EXPECT_ERROR(Model::LoadFromMemory(stored, options, "mlp.enc").status(), StatusCode::kPermissionDenied,
               "mlp.enc: decryption failed: wrong key");
}

TEST(LoadFromMemoryTest, HooksRefuseTarArchives) {
  RuntimeOptions options;
  options.verify_library = [](std::string_view, const std::string&) { return Status::Ok(); };
  auto tar = Model::Load("model.tar", options);
  EXPECT_ERROR(tar.status(), StatusCode::kUnimplemented, "model.tar: decryption and library verification apply");
}

// Loading from memory writes no file: a child process makes every mount read-only (a private mount
// namespace), checks that /tmp, the test's TMPDIR, HOME and the working directory refuse a new file,
// then loads and runs the model; its output equals the file-loaded model's.
TEST(LoadFromMemoryTest, NothingIsWrittenToAnyFileSystem) {
  const std::string child = testing::Runfile("tests/api/read_only_load_main");
  const std::string out_path = testing::MakeTempDir("read_only") + "/out.txt";
  const std::string command = testing::ShellCommandFor(child) + " " + ZooFile("mlp.so") + " " +
                              ZooFile("mlp_input.npy") + " > " + out_path + " 2>&1";
  const int rc = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(rc)) << rc;
  const std::string out = testing::ReadFileOrDie(out_path);
  if (WEXITSTATUS(rc) == 2) GTEST_SKIP() << "no read-only mount namespace here: " << out;
  ASSERT_EQ(WEXITSTATUS(rc), 0) << out;
  auto model = Model::Load(ZooFile("mlp.so"));
  ASSERT_TRUE(model.ok());
  const std::vector<std::string> expected = RunBytes(*model, {{"data", ReadZooNpy("mlp_input.npy")}});
  ASSERT_EQ(expected.size(), 1u);
  std::string hex;
  for (unsigned char c : expected[0]) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", c);
    hex += b;
  }
  EXPECT_EQ(out, hex + "\n");
}

}  // namespace
}  // namespace sorun
