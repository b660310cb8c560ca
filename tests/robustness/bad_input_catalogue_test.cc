// The bad-input catalogue, first part: files that are not model libraries, blob structure, graph and
// params payloads, calls with bad arguments, npy inputs. Every case runs through
// BadInputCatalogueTest (tests/robustness/catalogue.h): a clear error, never a crash, and the good
// model still runs afterwards. CI runs it under ASan + UBSan (leaks and memory errors fail the job).
// The other areas: bad_input_{kernels,plan,elf,cli,params}_test.cc.
#include <functional>
#include <string>

#include "api/model_loading.h"
#include "backends/device_module_payload.h"
#include "base/file_util.h"
#include "base/subprocess.h"
#include "format/binary_writer.h"
#include "graph_executor/graph_builder.h"
#include "graph_executor/graph_executable.h"
#include "inspect/elf_reader.h"
#include "packer/exporter.h"
#include "packer/module_serializer.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "tests/robustness/catalogue.h"
#include "tests/util/test_util.h"
#include "tools/npy.h"

namespace sorun {
namespace catalogue {
namespace {

using Env = CatalogueEnv;
using Case = CatalogueCase;

std::vector<Case> FileBlobAndCallCases() {
  Env& env = Env::Get();
  std::vector<Case> cases;
  auto add = [&](std::string name, std::function<Status()> run, std::string expected) {
    cases.push_back(Case{std::move(name), std::move(run), std::move(expected)});
  };
  auto u64 = [](uint64_t v) {
    BinaryWriter w;
    w.WriteU64(v);
    return w.bytes();
  };
  const std::string good = *ReadFileToString(env.good_so);

  // ---- files that are not model libraries ----
  std::string text = env.Path("text.so");
  EXPECT_TRUE(WriteFileBytes(text, std::string("hello, I am not a library")).ok());
  add(
      "not an ELF file", [=] { return LoadStatus(text); }, "text.so: not an ELF file");
  std::string empty = env.Path("empty.so");
  EXPECT_TRUE(WriteFileBytes(empty, std::string()).ok());
  add(
      "empty file", [=] { return LoadStatus(empty); }, "empty.so: not an ELF file");
  add(
      "missing file", [=] { return LoadStatus(env.dir + "/nope.so"); }, "no such file");
  add(
      "directory", [=] { return LoadStatus(env.dir); }, "not a regular file");
  // Truncations inside the program headers and the loaded segments (glibc's dlopen would die with
  // SIGBUS on these; the preflight check refuses them). Cutting only the section headers at the end
  // leaves a loadable library, which is fine.
  for (size_t cut : {size_t{64}, size_t{200}, size_t{1000}, good.size() / 3, good.size() / 2}) {
    std::string p = env.Path("truncated.so");
    EXPECT_TRUE(WriteFileBytes(p, good.substr(0, cut)).ok());
    add(
        "library truncated at " + std::to_string(cut), [=] { return LoadStatus(p); }, "not a loadable shared library");
  }
  {
    std::string bytes = good;
    bytes[18] = 3;  // e_machine = EM_386
    std::string p = env.Path("machine.so");
    EXPECT_TRUE(WriteFileBytes(p, bytes).ok());
    add(
        "library for another architecture", [=] { return LoadStatus(p); }, "built for x86, this machine is ");
  }
  // ---- blob structure ----
  add(
      "blob truncated: count promises entries that are missing",
      [&env, u64] { return LoadStatus(env.WithBlob(u64(3), "count.so")); }, "entry count 3 is impossible");
  add(
      "absurd entry count", [&env, u64] { return LoadStatus(env.WithBlob(u64(1ull << 62), "absurd.so")); },
      "entry count 4611686018427387904 is impossible");
  add(
      "type key length overflows", [&env, u64] { return LoadStatus(env.WithBlob(u64(1) + u64(~0ull), "keylen.so")); },
      "type key length 18446744073709551615 exceeds");
  add(
      "unknown type key lists the registered ones",
      [&env, u64] { return LoadStatus(env.WithBlob(u64(1) + env.Str("QuantumModule") + "\x01", "unknown.so")); },
      "'QuantumModule' but no loader of that name is registered (registered: ");
  add(
      "trailing bytes after the entries", [&env, u64] { return LoadStatus(env.WithBlob(u64(0) + "xyz", "trail.so")); },
      "3 trailing bytes");
  add(
      "two _lib entries",
      [&env, u64] {
        return LoadStatus(env.WithBlob(u64(3) + env.Str("_lib") + env.Str("_lib") + env.Str("_import_tree") + u64(3) +
                                           u64(0) + u64(1) + u64(1) + u64(1) + u64(1),
                                       "twolib.so"));
      },
      "multiple DSO modules");
  add(
      "_lib without an import tree",
      [&env, u64] { return LoadStatus(env.WithBlob(u64(1) + env.Str("_lib"), "lonelib.so")); },
      "_lib entry but no _import_tree");
  auto tree = [&env, u64](std::vector<uint64_t> rp, std::vector<uint64_t> ch, const char* name) {
    std::string p = u64(3) + env.Str("_lib") + env.Str("_lib") + "";
    (void)p;
    BinaryWriter w;
    w.WriteU64(2);
    w.WriteString("_lib");
    w.WriteString("_import_tree");
    w.WriteU64Vector(rp);
    w.WriteU64Vector(ch);
    return env.WithBlob(w.bytes(), name);
  };
  add(
      "row_ptr of the wrong length", [=] { return LoadStatus(tree({0}, {}, "rowlen.so")); },
      "row_ptr has 1 entries, expected 2");
  add(
      "row_ptr not starting at 0",
      [=] {
        return LoadStatus(tree({1, 1}, {}, "row0.so"));
      },
      "row_ptr[0] is 1");
  add(
      "child index out of range",
      [=] {
        return LoadStatus(tree({0, 1}, {5}, "child.so"));
      },
      "imports module 5, out of range");
  add(
      "module imports itself",
      [=] {
        return LoadStatus(tree({0, 1}, {0}, "self.so"));
      },
      "imports itself");
  add(
      "row_ptr ends before the children",
      [=] {
        return LoadStatus(tree({0, 0}, {0}, "rowend.so"));
      },
      "row_ptr ends at 0 but there are 1 child indices");
  {
    BinaryWriter w;
    w.WriteU64(3);
    w.WriteString("_lib");
    w.WriteString("opencl");
    DeviceModulePayload cl;
    cl.fmt = "cl";
    cl.data = "__kernel void k() {}";
    WriteDeviceModulePayload(cl, &w);
    w.WriteString("_import_tree");
    w.WriteU64Vector({0, 0, 0});
    w.WriteU64Vector({});
    std::string payload = w.bytes();
    add(
        "module unreachable from the root", [&env, payload] { return LoadStatus(env.WithBlob(payload, "unreach.so")); },
        "module 1 ('opencl') is not reachable from the root module 0");
  }
  // ---- factory payload ----
  add(
      "graph JSON syntax error", [&env] { return LoadStatus(env.WithFactory("{\"nodes\": [", env.params, "json.so")); },
      "graph JSON: syntax error at byte");
  add(
      "graph JSON missing a required key",
      [&env] { return LoadStatus(env.WithFactory("{\"nodes\": []}", env.params, "jsonkey.so")); },
      "missing required key");
  {
    std::string bad = env.good_json;
    bad.replace(bad.find("\"float32\""), 9, "\"float99\"");
    add(
        "graph JSON with an unknown dtype",
        [&env, bad] { return LoadStatus(env.WithFactory(bad, env.params, "dtype.so")); }, "unknown dtype 'float99'");
  }
  {
    std::string bad = env.good_json;
    size_t at = bad.find("[1,8]");
    if (at != std::string::npos) bad.replace(at, 5, "[1,-8]");
    add(
        "graph JSON with a negative shape",
        [&env, bad] { return LoadStatus(env.WithFactory(bad, env.params, "neg.so")); },
        "is not a non-negative integer");
  }
  {
    auto w9 = Tensor::Empty({4, 9}, Float32(), CpuDevice());
    NamedTensors p = {{"w", *w9}, {"b", env.params[1].second}};
    add(
        "param shape does not match the graph input",
        [&env, p] { return LoadStatus(env.WithFactory(env.good_json, p, "pshape.so")); },
        "param 'w' is float32[4, 9] on cpu:0 but the graph input expects float32[4, 8]");
    auto wi = Tensor::Empty({4, 8}, Int32(), CpuDevice());
    NamedTensors q = {{"w", *wi}, {"b", env.params[1].second}};
    add(
        "param dtype does not match the graph input",
        [&env, q] { return LoadStatus(env.WithFactory(env.good_json, q, "pdtype.so")); }, "param 'w' is int32[4, 8]");
  }
  {
    // Blob entry count (3), the factory's type key, the good graph, then `count` params named {"w"}:
    // each case below damages what follows.
    auto factory_head = [&env](uint64_t count) {
      BinaryWriter h(8);
      h.WriteU64(3);
      h.WriteString("GraphExecutorFactory");
      h.WriteString(env.good_json);
      h.WriteU64(count);
      h.WriteStringVector({"w"});
      return h;
    };
    BinaryWriter w = factory_head(1);
    w.WriteU64(0x1234567812345678ull);  // bad NDArray magic
    std::string payload = w.bytes() + std::string(64, '\0');
    add(
        "NDArray with a wrong magic", [&env, payload] { return LoadStatus(env.WithBlob(payload, "magic.so")); },
        "bad NDArray magic 0x1234567812345678");
    BinaryWriter c = factory_head(2);
    std::string payload2 = c.bytes() + std::string(64, '\0');
    add(
        "param count disagrees with the names",
        [&env, payload2] { return LoadStatus(env.WithBlob(payload2, "count2.so")); },
        "param count 2 does not match 1 names");
    BinaryWriter s = factory_head(1);
    s.WriteU64(kNDArrayMagic);
    s.WriteU64(0);
    s.WriteDevice(CpuDevice());
    s.WriteI32(2);
    s.WriteDataType(Float32());
    s.WriteI64(1ll << 40);
    s.WriteI64(1ll << 40);
    s.WriteI64(0);
    std::string payload3 = s.bytes();
    add(
        "NDArray shape whose size overflows", [&env, payload3] { return LoadStatus(env.WithBlob(payload3, "ovf.so")); },
        "too many elements");
    BinaryWriter d = factory_head(1);
    d.WriteU64(kNDArrayMagic);
    d.WriteU64(0);
    d.WriteDevice(DLDevice{kDLCUDA, 0});
    std::string payload4 = d.bytes() + std::string(64, '\0');
    add(
        "NDArray saved on a GPU device", [&env, payload4] { return LoadStatus(env.WithBlob(payload4, "gpu.so")); },
        "serialized arrays must be on cpu");
  }
  // ---- device module payloads ----
  {
    BinaryWriter w;
    w.WriteU64(3);
    w.WriteString("_lib");
    w.WriteString("opencl");
    DeviceModulePayload cl;
    cl.fmt = "cl";
    FunctionInfo info;
    info.arg_types = {Float32()};
    info.launch_param_tags = {"warpIdx.x"};
    cl.functions = {{"k", info}};
    cl.data = "__kernel void k(float x) {}";
    WriteDeviceModulePayload(cl, &w);
    w.WriteString("_import_tree");
    w.WriteU64Vector({0, 1, 1});
    w.WriteU64Vector({1});
    std::string payload = w.bytes();
    add(
        "device kernel with an unknown launch tag",
        [&env, payload] { return LoadStatus(env.WithBlob(payload, "tag.so")); }, "unknown launch tag 'warpIdx.x'");
  }
  // ---- integrity ----
  {
    std::string bytes = good;
    auto elf = ElfImage::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "good.so");
    auto blob = elf->FindSymbolData("__tvm_dev_mblob");
    std::string needle(reinterpret_cast<const char*>(env.params[0].second.data()), 32);
    size_t at = bytes.find(needle, blob->file_offset);
    bytes[at + 5] ^= 0x40;
    std::string p = env.Path("flipped.so");
    EXPECT_TRUE(WriteFileBytes(p, bytes).ok());
    add(
        "weight byte flipped (checksum verification on)",
        [=] {
          LoadOptions verify;
          verify.verify_checksum = true;
          return Load(p, verify).status();
        },
        "blob checksum mismatch");
  }
  // ---- calls on an executor ----
  auto tensor = [](std::vector<int64_t> shape, DLDataType t) { return *Tensor::Empty(shape, t, CpuDevice()); };
  add(
      "set_input with an unknown name",
      [=] { return RunGood([&](GraphExecutor& e) {
              return e.SetInput("image", *tensor({1, 8}, Float32()).dl());
            }); },
      "no input named 'image' (inputs: data)");
  add(
      "set_input with the wrong shape",
      [=] { return RunGood([&](GraphExecutor& e) { return e.SetInput("data", *tensor({8}, Float32()).dl()); }); },
      "expected float32[1, 8], got float32[8]");
  add(
      "set_input with the wrong dtype",
      [=] { return RunGood([&](GraphExecutor& e) {
              return e.SetInput("data", *tensor({1, 8}, Int32()).dl());
            }); },
      "expected float32[1, 8], got int32[1, 8]");
  add(
      "set_input index out of range",
      [=] { return RunGood([&](GraphExecutor& e) {
              return e.SetInput(7, *tensor({1, 8}, Float32()).dl());
            }); },
      "input index 7 out of range");
  add(
      "get_output index out of range",
      [=] { return RunGood([](GraphExecutor& e) { return e.GetOutput(3).status(); }); }, "output index 3 out of range");
  add(
      "copy output into a tensor of another shape",
      [=] { return RunGood([&](GraphExecutor& e) {
              return e.CopyOutputTo(0, *tensor({1, 5}, Float32()).dl());
            }); },
      "the output is float32[1, 4], the target is float32[1, 5]");
  add(
      "params file for another model",
      [=] {
        return RunGood([&](GraphExecutor& e) {
          BinaryWriter w;
          EXPECT_TRUE(WriteParamsDict({{"conv9_w", tensor({2}, Float32())}}, &w, false).ok());
          return e.LoadParams(w.bytes());
        });
      },
      "'conv9_w' is not an input of this graph");
  add(
      "garbage params bytes", [=] { return RunGood([](GraphExecutor& e) { return e.LoadParams("garbage!"); }); },
      "params byte 0: bad params magic");
  add(
      "zero-copy input that is not 64-byte aligned",
      [=] {
        return RunGood([&](GraphExecutor& e) {
          Tensor big = tensor({16}, Float32());
          return e.SetInputZeroCopy(0, *big.View({1, 8}, Float32(), 4)->dl());
        });
      },
      "not 64-byte aligned");
  add(
      "executor on an absent device",
      [=] {
        auto model = Load(env.good_so);
        return CreateExecutor(*model, {DLDevice{kDLCPU, 5}}).status();
      },
      "device cpu:5 is not present");
  add(
      "executor on a device with no driver",
      [=] {
        auto model = Load(env.good_so);
        return CreateExecutor(*model, {DLDevice{kDLCUDA, 0}}).status();
      },
      "cuda:0");
  // ---- kernels ----
  {
    GraphBuilder b;
    int x = b.Input("data", {4});
    b.Output(b.Op("sorun_fused_conv_that_does_not_exist", {x}, {4}, Float32(), "ghost"));
    std::string json = *b.BuildJson();
    std::string p = env.WithFactory(json, {}, "ghost.so");
    add(
        "missing kernel symbol",
        [=] {
          auto model = Load(p);
          if (!model.ok()) return model.status();
          return CreateExecutor(*model, {CpuDevice()}).status();
        },
        "node 1 ('ghost'): kernel function 'sorun_fused_conv_that_does_not_exist' is not in the kernel library");
    GraphBuilder f;
    int fx = f.Input("data", {4});
    f.Output(f.Op("sorun_fail", {fx}, {4}, Float32(), "doomed"));
    std::string pf = env.WithFactory(*f.BuildJson(), {}, "fail.so");
    add(
        "kernel that returns an error",
        [=] {
          auto model = Load(pf);
          auto exec = CreateExecutor(*model, {CpuDevice()});
          if (!exec.ok()) return exec.status();
          return (*exec)->Run();
        },
        "node 1 ('doomed'): function 'sorun_fail' failed (returned -1): sorun_fail: this kernel always fails");
  }
  // ---- root is not a factory ----
  add(
      "model without a graph used as one",
      [&env] {
        std::string p = env.Path("plain.so");
        EXPECT_TRUE(ExportLibrary(env.Host(), p).ok());
        auto model = Load(p);
        return CreateExecutor(*model, {CpuDevice()}).status();
      },
      "not a GraphExecutorFactory");
  // ---- npy inputs ----
  auto npy = [&env](const std::string& bytes, const char* name) {
    std::string p = env.Path(name);
    EXPECT_TRUE(WriteFileBytes(p, bytes).ok());
    return p;
  };
  std::string bad_magic = npy("NOTNUMPY", "magic.npy");
  add(
      "npy with a bad magic", [=] { return ReadNpyFile(bad_magic).status(); },
      "not an .npy file (no \\x93NUMPY magic)");
  std::string fortran =
      npy(std::string("\x93NUMPY\x01\x00\x46\x00", 10) + "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }" +
              std::string(11, ' ') + "\n" + std::string(16, '\0'),
          "fortran.npy");
  add(
      "fortran-order npy", [=] { return ReadNpyFile(fortran).status(); }, "fortran-order arrays are not supported");
  std::string short_data =
      npy(std::string("\x93NUMPY\x01\x00\x46\x00", 10) + "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }" +
              std::string(12, ' ') + "\n" + std::string(8, '\0'),
          "short.npy");
  add(
      "npy data shorter than its shape", [=] { return ReadNpyFile(short_data).status(); },
      "data is 8 bytes but shape (4,) of '<f4' needs 16 (truncated)");
  return cases;
}

SORUN_CATALOGUE_CASES(FileBlobAndCall, FileBlobAndCallCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
