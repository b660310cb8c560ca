// Bad-input catalogue, CLI and contract cases: gzip bombs, pack outputs, environment variables, dtypes.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "base/env_vars.h"
#include "format/tar_archive.h"
#include "runtime/c_runtime_api.h"
#include "runtime/data_type.h"
#include "runtime/packed_func.h"
#include "runtime/thread_pool.h"
#include "tests/format/tar_test_util.h"
#include "tests/robustness/catalogue.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace catalogue {
namespace {

Status OpenTar(const std::string& name, const std::string& bytes) {
  const std::string path = CatalogueEnv::Get().Path(name);
  testing::WriteFileOrDie(path, bytes);
  return TarFile::Open(path).status();
}

std::vector<CatalogueCase> CliCases() {
  std::vector<CatalogueCase> cases;
  const std::string mib(1 << 20, '\0');
  cases.push_back({"gzip bomb: a 256 MiB member in a 254 KiB tar.gz",
                   [mib] {
                     const std::string member = tar_test::Header({"lib0.o", uint64_t{256} << 20});
                     return OpenTar("bomb.tar", tar_test::GzipRepeated({{member, 1}, {mib, 256}}));
                   },
                   "gzip: the archive inflates to more than"});
  cases.push_back({"gzip bomb: 256 MiB of zeros after the end-of-archive marker",
                   [mib] {
                     return OpenTar("zeros.tar", tar_test::GzipRepeated({{mib, 256}}));
                   },
                   "continues past the archive's end-of-archive marker (ending at archive byte 1024) with more than"});
  cases.push_back(
      {"gzip tar: data hidden past the end-of-archive marker",
       [] {
         return OpenTar("hidden.tar", tar_test::GzipRepeated({{std::string(1024, '\0'), 1}, {"payload", 1}}));
       },
       "with non-zero data that no header accounts for"});
  for (const char* value : {"abc", "0", "-3", "2x", "1025"}) {
    cases.push_back(
        {std::string("SORUN_NUM_THREADS=") + value,
         [value] { return ParseEnvInt(kEnvNumThreads, value, 1, ThreadPool::kMaxThreads, "threads").status(); },
         std::string("environment variable SORUN_NUM_THREADS is '") + value + "': use a whole number from 1 to 1024"});
  }
  cases.push_back({"SORUN_VERIFY_CHECKSUM=yes",
                   [] { return ParseEnvBool(kEnvVerifyChecksum, "yes", "verify").status(); },
                   "environment variable SORUN_VERIFY_CHECKSUM is 'yes': use 1 (verify) or 0 (do not)"});
  cases.push_back({"device type 99 from a file", [] { return MakeDevice(99, 0).status(); },
                   "unknown device type 99 (DLPack device types are 0..15)"});
  cases.push_back({"C++ exception thrown into TVMFuncCall",
                   [] {
                     PackedFunc f =
                         PackedFunc::FromBody("throws", [](PackedArgs, Value*) -> Status { throw std::bad_alloc(); });
                     TVMValue ret;
                     int code = 0;
                     if (TVMFuncCall(f.get(), nullptr, nullptr, 0, &ret, &code) == 0) return Status::Ok();
                     return Aborted(TVMGetLastError());
                   },
                   "TVMFuncCall: out of memory (std::bad_alloc)"});
  return cases;
}

SORUN_CATALOGUE_CASES(Cli, CliCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
