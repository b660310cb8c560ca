#include "serialization/tar_loader.h"

#include <elf.h>

#include <filesystem>
#include <vector>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "format/elf_preflight.h"
#include "format/tar_archive.h"
#include "runtime/function_registry.h"
#include "serialization/loader.h"

namespace sorun {

StatusOr<Module> LoadTarArchive(const std::string& path, const LoadOptions& options) {
  SORUN_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("sorun_tar"));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<TarFile> file, TarFile::Open(path));  // plain or gzip-compressed (TVM)
  SORUN_ASSIGN_OR_RETURN(std::vector<TarEntry> entries, ReadTarArchive(file->data(), file->size(), path));
  SORUN_RETURN_IF_ERROR(ExtractTarEntries(entries, dir.path()));
  std::vector<std::string> cmd = {CCompiler(), "-shared", "-o", dir.path() + "/lib.so"};
  std::vector<std::string> archives;
  for (const TarEntry& e : entries) {
    std::string ext = std::filesystem::path(e.name).extension().string();
    // An object for another architecture would only fail the link with the linker's words: name both.
    if (ext == ".o" && e.size >= EI_NIDENT + 4 && e.data[EI_CLASS] == ELFCLASS64 && e.data[EI_DATA] == ELFDATA2LSB) {
      const uint16_t machine = static_cast<uint16_t>(e.data[18] | (e.data[19] << 8));  // e_machine
      if (HostElfMachine() != 0 && machine != HostElfMachine()) {
        return DataLoss(path + ": " + e.name + " is built for " + ElfMachineName(machine) + ", this machine is " +
                        ElfMachineName(HostElfMachine()));
      }
    }
    if (ext == ".o") cmd.push_back(dir.path() + "/" + e.name);
    if (ext == ".a") archives.push_back(dir.path() + "/" + e.name);
  }
  if (cmd.size() == 4 && archives.empty()) return DataLoss(path + ": the archive holds no object files");
  if (!archives.empty()) {
    cmd.push_back("-Wl,--whole-archive");
    cmd.insert(cmd.end(), archives.begin(), archives.end());
    cmd.push_back("-Wl,--no-whole-archive");
  }
  cmd.push_back("-lm");
  SORUN_RETURN_IF_ERROR_CTX(RunCommand(cmd), path + ": linking the archived objects");
  // The mapping stays valid after the temporary directory is removed.
  auto loaded = LoadModule(dir.path() + "/lib.so", options);
  if (!loaded.ok()) return std::move(loaded).status().Annotate(path);
  return loaded;
}

Status RegisterTarLoader() {
  static const char kName[] = "runtime.module.loadfile_tar";
  if (FunctionRegistry::Global().Get(kName).defined()) return Status::Ok();
  return FunctionRegistry::Global().Register(
      kName,
      PackedFunc::FromBody(
          kName,
          [](PackedArgs args, Value* ret) -> Status {
            SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(1, "runtime.module.loadfile_tar"));
            if (args.size() > 2) {
              return InvalidArgument("runtime.module.loadfile_tar takes (path[, verify_checksum]), got " +
                                     std::to_string(args.size()) + " arguments");
            }
            SORUN_ASSIGN_OR_RETURN(std::string_view path, args.GetStr(0));
            LoadOptions options;
            if (args.size() == 2) {
              SORUN_ASSIGN_OR_RETURN(int64_t verify, args.GetInt(1));
              if (verify != 0 && verify != 1) {
                return InvalidArgument("runtime.module.loadfile_tar: argument 1 (verify_checksum) is " +
                                       std::to_string(verify) + ", expected 0 or 1");
              }
              options.verify_checksum = verify == 1;
            }
            SORUN_ASSIGN_OR_RETURN(Module m, LoadTarArchive(std::string(path), options));
            *ret = Value::FromModule(std::move(m));
            return Status::Ok();
          }),
      /*allow_override=*/true);
}

}  // namespace sorun
