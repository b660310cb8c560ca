// The bad-input catalogue, params files of the three-file deployment (Model::LoadFromFiles): every
// malformed params file is refused naming that file and the byte offset of what is wrong, never the
// library or the graph JSON beside it. The params dict layout (docs/spec/FORMAT.md section 5.2) of the
// good model's params ("w" float32[4, 8], "b" float32[4]) as sorun writes them without alignment: magic
// (0), reserved (8), names (16: count, "w", "b"), count (42), w's NDArray (50; data at 106), b's (234).
// Every case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <functional>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "base/file_util.h"
#include "format/binary_writer.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "runtime/tensor_io.h"
#include "tests/robustness/catalogue.h"

namespace sorun {
namespace catalogue {
namespace {

using Env = CatalogueEnv;
using Case = CatalogueCase;

// A params dict written by hand: magic, reserved, `names`, `count`, then `arrays` as given.
std::string ParamsBytes(const std::vector<std::string>& names, uint64_t count, const std::string& arrays) {
  BinaryWriter w;
  w.WriteU64(kNDArrayListMagic);
  w.WriteU64(0);
  w.WriteStringVector(names);
  w.WriteU64(count);
  return w.bytes() + arrays;
}

// One NDArray header of a float32 `shape`, with `ndim` and `dtype` as given (the data is not written).
std::string ArrayHeader(int32_t ndim, DLDataType dtype, const std::vector<int64_t>& shape) {
  BinaryWriter w;
  w.WriteU64(kNDArrayMagic);
  w.WriteU64(0);
  w.WriteDevice(CpuDevice());
  w.WriteI32(ndim);
  w.WriteDataType(dtype);
  for (int64_t d : shape) w.WriteI64(d);
  return w.bytes();
}

std::vector<Case> ParamsFileCases() {
  Env& env = Env::Get();
  std::vector<Case> cases;
  const std::string json = env.Path("model.json");
  EXPECT_TRUE(WriteFileBytes(json, env.good_json).ok());
  const std::string lib = env.Path("kernels.so");
  EXPECT_TRUE(ExportLibrary(env.Host(), lib).ok());
  auto written = [&env](const NamedTensors& p) {
    BinaryWriter w;
    EXPECT_TRUE(WriteParamsDict(p, &w, /*align_data=*/false).ok());
    return std::string(w.bytes());
  };
  const std::string good = written(env.params);
  // A case: `bytes` as the params file `name`, refused with "<its path> byte <expected>".
  auto add = [&](std::string name, const std::string& bytes, const std::string& expected) {
    std::string path = env.Path(name);
    EXPECT_TRUE(WriteFileBytes(path, bytes).ok());
    cases.push_back(Case{"params file: " + name,
                         [json, lib, path] { return Model::LoadFromFiles(json, lib, path).status(); },
                         path + " byte " + expected});
  };

  add("bad_magic.params", "garbage!" + good.substr(8), "0: bad params magic 0x2165676162726167");
  add("truncated_header.params", good.substr(0, 12), "8: truncated: u64 needs 8 bytes but only 4 remain");
  add("names_count.params", good.substr(0, 16) + Env::U64(1ull << 40),
      "16: param names count 1099511627776 is impossible with 0 bytes left");
  add("name_length.params", good.substr(0, 16) + Env::U64(1) + Env::U64(1000) + "w",
      "24: param names length 1000 exceeds the 1 bytes left");
  add("count.params", ParamsBytes({"w", "b"}, 3, good.substr(50)), "42: params count 3 does not match 2 names");
  add("tensor_truncated.params", good.substr(0, 150),
      "106: param 'w': truncated: NDArray data needs 128 bytes but only 44 remain");
  add("array_magic.params", ParamsBytes({"w"}, 1, Env::U64(0x1234567812345678ull) + std::string(64, '\0')),
      "41: param 'w': bad NDArray magic 0x1234567812345678");
  add("dtype.params", ParamsBytes({"w"}, 1, ArrayHeader(2, DLDataType{99, 32, 1}, {4, 8}) + std::string(64, '\0')),
      "69: param 'w': NDArray dtype");
  add("ndim.params", ParamsBytes({"w"}, 1, ArrayHeader(65, Float32(), {}) + std::string(64, '\0')),
      "65: param 'w': NDArray ndim 65 out of range [0, 64]");
  add("trailing.params", good + "xyz", std::to_string(good.size()) + ": 3 trailing bytes after the params");
  add("given_twice.params", written({env.params[0], env.params[0]}),
      "234: param 'w' is given twice (first at byte 50)");
  auto w9 = Tensor::Empty({4, 9}, Float32(), CpuDevice());
  add("shape.params", written({{"w", *w9}, env.params[1]}),
      "50: param 'w' is float32[4, 9] on cpu:0 but " + json + " input expects float32[4, 8]");
  add("unknown_name.params", written({env.params[0], {"conv9_w", env.params[1].second}}),
      "240: param 'conv9_w' is not an input of " + json + " (inputs: b, data, w)");
  return cases;
}

SORUN_CATALOGUE_CASES(ParamsFile, ParamsFileCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
