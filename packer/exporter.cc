#include "packer/exporter.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "base/file_util.h"
#include "base/subprocess.h"
#include "packer/blob_assembly.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "packer/tar_writer.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;

enum class FileKind { kObject, kArchive, kCSource, kCxxSource, kAsmSource, kUnknown };

FileKind Classify(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  if (ext == ".o" || ext == ".obj") return FileKind::kObject;
  if (ext == ".a" || ext == ".lo") return FileKind::kArchive;  // .lo: Bazel's alwayslink archive
  if (ext == ".c") return FileKind::kCSource;
  if (ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C") return FileKind::kCxxSource;
  if (ext == ".S" || ext == ".s") return FileKind::kAsmSource;
  return FileKind::kUnknown;
}

// C route (TVM's PackImportsToC layout, plus 64-byte alignment).
Status WriteCSourceForBlob(const std::string& path, const std::string& blob, const std::string& checksum_bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Unavailable("cannot write " + path);
  std::fprintf(f,
               "#ifdef _WIN32\n#define TVM_EXPORT __declspec(dllexport)\n#else\n#define TVM_EXPORT\n#endif\n"
               "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
               "TVM_EXPORT extern const unsigned char %s[];\n"
               "__attribute__((aligned(64))) const unsigned char %s[%zu] = {\n",
               keys::kSymbolDevMblob, keys::kSymbolDevMblob, blob.size());
  static const char kHex[] = "0123456789abcdef";
  std::string line;
  for (size_t i = 0; i < blob.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(blob[i]);
    line += "0x";
    line += kHex[c >> 4];
    line += kHex[c & 15];
    line += ',';
    if (i % 20 == 19) {
      line += '\n';
      std::fwrite(line.data(), 1, line.size(), f);
      line.clear();
    }
  }
  line += "\n};\n";
  std::fwrite(line.data(), 1, line.size(), f);
  if (!checksum_bytes.empty()) {
    std::fprintf(
        f, "TVM_EXPORT extern const unsigned char %s[];\n__attribute__((aligned(8))) const unsigned char %s[%zu] = {",
        keys::kSymbolBlobChecksum, keys::kSymbolBlobChecksum, checksum_bytes.size());
    for (size_t i = 0; i < checksum_bytes.size(); ++i) {
      std::fprintf(f, "%s%u", i ? "," : "", static_cast<unsigned>(static_cast<unsigned char>(checksum_bytes[i])));
    }
    std::fprintf(f, "};\n");
  }
  std::fprintf(f, "#ifdef __cplusplus\n}\n#endif\n");
  bool ok = std::ferror(f) == 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return Unavailable("cannot write " + path + " (disk full?)");
  return Status::Ok();
}

}  // namespace

std::string MakeBlobBytes(const std::string& payload) {
  std::string blob(8, '\0');
  uint64_t n = payload.size();
  for (int i = 0; i < 8; ++i) blob[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  blob += payload;
  return blob;
}

StatusOr<ExportReport> ExportLibrary(const Module& root, const std::string& output_path, const ExportOptions& options) {
  SORUN_ASSIGN_OR_RETURN(SerializedModuleTree tree, SerializeModuleTree(root));
  std::vector<HostCode> host;
  for (const Module& dso : tree.dso_modules) {
    const auto* code = ModuleNodeAs<HostCodeModuleNode>(dso);
    if (code == nullptr) {
      return FailedPrecondition(std::string("cannot export: DSO module of type '") + dso.type_key() +
                                "' carries no host code to link");
    }
    host.push_back(code->code());
  }
  // TVM packs a blob only when the tree is more than a lone host library.
  bool need_blob = !(tree.dso_modules.size() == 1 && root.get() == tree.dso_modules[0].get() && root.imports().empty());
  SORUN_ASSIGN_OR_RETURN(ExportReport report,
                         LinkLibraryWithBlob(need_blob ? &tree.payload : nullptr, host, output_path, options));
  report.type_keys = tree.type_keys;
  report.has_import_tree = tree.has_import_tree;
  return report;
}

StatusOr<ExportReport> LinkLibraryWithBlob(const std::string* blob_payload, const std::vector<HostCode>& host,
                                           const std::string& output_path, const ExportOptions& options) {
  ExportReport report;
  std::optional<TempDir> temp;
  std::string work = options.work_dir;
  if (work.empty()) {
    SORUN_ASSIGN_OR_RETURN(TempDir t, TempDir::Create("sorun_export"));
    temp.emplace(std::move(t));
    work = temp->path();
  } else {
    std::error_code ec;
    fs::create_directories(work, ec);
    if (ec) return Unavailable("cannot create " + work + ": " + ec.message());
  }
  const std::string cc = CCompiler(options.cc);
  const std::string cxx = CxxCompiler(options.cxx);

  // Host code: compile sources, collect objects and archives.
  std::vector<std::string> objects;
  std::vector<std::string> archives;
  std::vector<std::string> link_flags;
  int source_index = 0;
  for (const HostCode& code : host) {
    for (const std::string& file : code.files) {
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) return NotFound("host code file " + file + " does not exist");
      std::string abs = fs::absolute(file, ec).string();
      FileKind kind = Classify(file);
      switch (kind) {
        case FileKind::kObject: objects.push_back(abs); break;
        case FileKind::kArchive: archives.push_back(abs); break;
        case FileKind::kCSource:
        case FileKind::kCxxSource:
        case FileKind::kAsmSource: {
          std::string obj = work + "/host" + std::to_string(source_index++) + ".o";
          std::vector<std::string> cmd = {kind == FileKind::kCxxSource ? cxx : cc, "-c", "-fPIC", "-O2"};
          if (kind == FileKind::kCxxSource) cmd.push_back("-std=c++17");
          cmd.insert(cmd.end(), code.compile_flags.begin(), code.compile_flags.end());
          cmd.insert(cmd.end(), {abs, "-o", obj});
          SORUN_RETURN_IF_ERROR_CTX(RunCommand(cmd), "compiling " + file);
          objects.push_back(obj);
          break;
        }
        case FileKind::kUnknown:
          return InvalidArgument("host code file " + file +
                                 ": unknown kind (expected .o, .a, .c, .cc, .cpp, .S or .s)");
      }
    }
    link_flags.insert(link_flags.end(), code.link_flags.begin(), code.link_flags.end());
  }

  if (blob_payload != nullptr) {
    const std::string blob = MakeBlobBytes(*blob_payload);
    report.blob_bytes = blob.size();
    std::string checksum = options.write_checksum ? MakeBlobChecksumRecord(blob) : std::string();
    std::string blob_obj = work + "/devc.o";
    if (options.embedding == BlobEmbedding::kAssembly) {
      std::string blob_path = work + "/devc.bin";
      std::string asm_path = work + "/devc.S";
      if (blob_path.find('"') != std::string::npos) return InvalidArgument("work directory contains '\"'");
      SORUN_RETURN_IF_ERROR(WriteFileBytes(blob_path, blob));
      SORUN_RETURN_IF_ERROR(
          WriteFileBytes(asm_path, BlobAssembly(blob_path, blob.size(), checksum, BlobAssemblyOptions{})));
      SORUN_RETURN_IF_ERROR_CTX(RunCommand({cc, "-c", asm_path, "-o", blob_obj}), "assembling the blob");
    } else {
      std::string c_path = work + "/devc.c";
      SORUN_RETURN_IF_ERROR(WriteCSourceForBlob(c_path, blob, checksum));
      SORUN_RETURN_IF_ERROR_CTX(RunCommand({cc, "-c", "-fPIC", "-O0", c_path, "-o", blob_obj}),
                                "compiling the blob C source");
    }
    objects.push_back(blob_obj);
  }
  if (objects.empty() && archives.empty()) {
    return InvalidArgument("nothing to export: no host code and no blob");
  }

  const std::string tmp_out = output_path + ".tmp." + std::to_string(getpid());
  bool is_tar = fs::path(output_path).extension() == ".tar";
  if (is_tar) {
    TarWriter tar;
    int index = 0;
    auto add = [&](const std::string& name, const std::string& path) -> Status {
      SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
      return tar.AddFile(name, file->bytes());
    };
    for (const std::string& obj : objects) {
      std::string name = (obj == work + "/devc.o") ? "devc.o" : "lib" + std::to_string(index++) + ".o";
      SORUN_RETURN_IF_ERROR(add(name, obj));
    }
    for (const std::string& a : archives) {
      SORUN_RETURN_IF_ERROR(add("lib" + std::to_string(index++) + ".a", a));
    }
    SORUN_RETURN_IF_ERROR(tar.WriteToFile(tmp_out));
  } else {
    std::vector<std::string> cmd = {cc, "-shared", "-o", tmp_out};
    cmd.insert(cmd.end(), objects.begin(), objects.end());
    if (!archives.empty()) {
      cmd.push_back("-Wl,--whole-archive");
      cmd.insert(cmd.end(), archives.begin(), archives.end());
      cmd.push_back("-Wl,--no-whole-archive");
    }
    cmd.insert(cmd.end(), link_flags.begin(), link_flags.end());
    cmd.push_back("-lm");
    Status s = RunCommand(cmd);
    if (!s.ok()) {
      std::remove(tmp_out.c_str());
      return std::move(s).Annotate("linking " + output_path);
    }
  }
  if (std::rename(tmp_out.c_str(), output_path.c_str()) != 0) {
    std::remove(tmp_out.c_str());
    return Unavailable("cannot write " + output_path);
  }
  report.linked_files = objects;
  report.linked_files.insert(report.linked_files.end(), archives.begin(), archives.end());
  return report;
}

}  // namespace sorun
