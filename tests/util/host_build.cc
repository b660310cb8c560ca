#include "tests/util/host_build.h"

#include <cstdint>
#include <cstdlib>

#include "format/elf_preflight.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace testing {

std::string HostBuild(const std::string& workspace_relative) {
  if (ElfMachineName(HostElfMachine()) == "x86_64") return workspace_relative;
  const size_t slash = workspace_relative.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : workspace_relative.substr(0, slash + 1);
  const std::string file = workspace_relative.substr(slash == std::string::npos ? 0 : slash + 1);
  const std::string host = dir + ElfMachineName(HostElfMachine()) + "/" + file;
  return FileExists(Runfile(host)) ? host : workspace_relative;
}

bool RecordedBitForBit(const std::string& workspace_relative) {
  return HostBuild(workspace_relative) == workspace_relative;
}

std::string ForeignBuildReason(const std::string& path) {
  if (!FileExists(path)) return "";
  const std::string bytes = ReadFileOrDie(path);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  // The loader's own preflight: a library it would take on its own architecture (machine 0: any) that
  // it refuses on this one says "built for <its>, this machine is <this>".
  if (!PreflightSharedLibraryBytes(data, bytes.size(), path, /*machine=*/0).ok()) return "";
  const Status here = PreflightSharedLibraryBytes(data, bytes.size(), path);
  return here.ok() ? "" : here.message();
}

std::string TestEmulator() {
  const char* emulator = std::getenv("SORUN_TEST_EMULATOR");
  return emulator == nullptr ? "" : emulator;
}

std::string ShellCommandFor(const std::string& program) {
  const std::string emulator = TestEmulator();
  return emulator.empty() ? program : emulator + " " + program;
}

}  // namespace testing
}  // namespace sorun
