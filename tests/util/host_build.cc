#include "tests/util/host_build.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "format/elf_preflight.h"
#include "tests/util/test_util.h"

namespace sorun {
namespace testing {
namespace {

// e_machine of the ELF file at `path`, or 0 when it is not one.
uint16_t ElfMachineOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof(header))) return 0;
  if (header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') return 0;
  if (header[5] != 1) return 0;  // sorun's targets are little-endian
  return static_cast<uint16_t>(header[18] | (header[19] << 8));
}

}  // namespace

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
  const uint16_t machine = ElfMachineOf(path);
  if (machine == 0 || machine == HostElfMachine()) return "";
  return path + ": built for " + ElfMachineName(machine) + ", this machine is " + ElfMachineName(HostElfMachine());
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
