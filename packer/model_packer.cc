#include "packer/model_packer.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "backends/cuda/cuda_module.h"
#include "backends/device_module_payload.h"
#include "base/file_checks.h"
#include "base/file_util.h"
#include "base/subprocess.h"
#include "base/xxhash64.h"
#include "format/binary_reader.h"
#include "format/tar_archive.h"
#include "graph_executor/factory_module.h"
#include "graph_executor/graph_json.h"
#include "graph_executor/shared_weights.h"
#include "inspect/elf_reader.h"
#include "inspect/model_file.h"
#include "packer/device_payload_module.h"
#include "packer/elf_blob_injector.h"
#include "packer/embedded_headers.h"
#include "packer/fmap.h"
#include "packer/host_code_module.h"
#include "packer/module_serializer.h"
#include "runtime/data_type.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor_io.h"
#include "serialization/blob_checksum.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace {

namespace fs = std::filesystem;

std::string Extension(const std::string& path) { return fs::path(path).extension().string(); }

// Refuses an object file that already carries a module blob.
Status CheckObjectHasNoBlob(const std::string& label, const uint8_t* data, size_t size) {
  auto image = ElfImage::Parse(data, size, label);
  if (!image.ok()) return std::move(image).status();
  if (image->HasSymbol(keys::kSymbolDevMblob)) {
    return InvalidArgument(label + " already defines " + std::string(keys::kSymbolDevMblob) +
                           " (a packed blob object such as TVM's devc.o): it would clash with the new blob; give the "
                           "device code with --cuda/--opencl and leave that object out");
  }
  return Status::Ok();
}

// The objects and archives of a TVM `.tar` library, extracted into `dir`, without the member
// `blob_member` (TVM's devc.o whose device modules were carried over; "" for none).
StatusOr<std::vector<std::string>> ExtractTarLibrary(const std::string& tar_path, const std::string& dir,
                                                     const std::string& blob_member) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<TarFile> file, TarFile::Open(tar_path));  // plain or gzip (TVM's)
  SORUN_ASSIGN_OR_RETURN(std::vector<TarEntry> entries, ReadTarArchive(file->data(), file->size(), tar_path));
  std::vector<TarEntry> keep;
  for (const TarEntry& e : entries) {
    if (!blob_member.empty() && e.name == blob_member) continue;
    std::string ext = Extension(e.name);
    if (ext == ".o") SORUN_RETURN_IF_ERROR(CheckObjectHasNoBlob(tar_path + ":" + e.name, e.data, e.size));
    if (ext == ".o" || ext == ".a") keep.push_back(e);
  }
  if (keep.empty()) return InvalidArgument(tar_path + ": the archive holds no object files (.o) or archives (.a)");
  SORUN_RETURN_IF_ERROR_CTX(ExtractTarEntries(keep, dir), tar_path);
  std::vector<std::string> files;
  for (const TarEntry& e : keep) files.push_back(dir + "/" + e.name);
  return files;
}

// The device modules a kernel library already carries. TVM's lib.get_lib().export_library() of a GPU
// build (the library of a three-file deployment) writes a blob of its own: the kernel library as the
// root importing its device modules ("_lib" -> "opencl" / "cuda"), in the .so itself or, for a .tar,
// in its devc.o. `sorun pack` takes those modules over into the new tree (and replaces the blob).
// Anything else in the blob (a GraphExecutorFactory: a deploy library; other module kinds) is refused.
struct CarriedDeviceModules {
  std::vector<Module> modules;  // in import order
  std::string blob_member;      // the tar member holding the blob ("" for a .so or without a blob)
  bool has_blob = false;
};

StatusOr<CarriedDeviceModules> DeviceModulesOfKernelLibrary(const std::string& path, bool is_tar) {
  CarriedDeviceModules carried;
  auto file = ModelFile::Open(path);
  if (!file.ok()) {
    // A tar without ELF objects (only .a members) has no blob; ExtractTarLibrary reports real damage.
    if (is_tar) return carried;
    return NamePath(std::move(file).status(), path);
  }
  const ElfSymbolData* blob = file->blob();
  if (blob == nullptr) return carried;
  carried.has_blob = true;
  carried.blob_member = file->blob_member();
  const std::string where =
      path + (carried.blob_member.empty() ? "" : ":" + carried.blob_member) + ": " + keys::kSymbolDevMblob;
  BinaryReader reader(blob->data + 8, static_cast<size_t>(file->payload_size()), where, /*base_offset=*/8);
  std::map<size_t, Module> loaded;
  BlobLayout layout;
  SORUN_RETURN_IF_ERROR(
      ParseModuleBlob(
          reader,
          [&](size_t index, const std::string& key, BinaryReader& r) -> Status {
            if (key == keys::kTypeKeyOpenCL || key == keys::kTypeKeyCuda) {
              DeviceModulePayload payload;
              SORUN_RETURN_IF_ERROR(ReadDeviceModulePayload(r, key.c_str(), &payload));
              auto m = key == keys::kTypeKeyOpenCL ? MakeOpenclPayloadModule(std::move(payload))
                                                   : CreateCudaModule(std::move(payload));
              if (!m.ok()) return std::move(m).status().Annotate("module " + std::to_string(index) + " (" + key + ")");
              loaded[index] = *m;
              return Status::Ok();
            }
            if (keys::IsGraphExecutorFactoryTypeKey(key)) {
              return InvalidArgument("it is already a packed model (its blob holds a " + key +
                                     "): give the kernel library of the three-file deployment (TVM's "
                                     "lib.get_lib().export_library()), not the deploy library");
            }
            return InvalidArgument("its blob holds a '" + key +
                                   "' module: only the device modules (opencl, cuda) of a kernel library are carried "
                                   "over into the packed model");
          },
          &layout)
          .Annotate(where));
  // The kernel library is the root and imports every device module, which import nothing.
  std::vector<uint64_t> order;
  if (layout.has_import_tree) {
    if (layout.lib_index != 0) {
      return InvalidArgument(where + ": the root module is not the kernel library (\"_lib\")");
    }
    order = layout.Children(0);
    for (size_t i = 1; i < layout.modules.size(); ++i) {
      if (!layout.Children(i).empty() || std::find(order.begin(), order.end(), i) == order.end()) {
        return InvalidArgument(where + ": module " + std::to_string(i) + " (" + layout.modules[i].type_key +
                               ") is not a direct import of the kernel library");
      }
    }
  } else {
    for (size_t i = 0; i < layout.modules.size(); ++i) order.push_back(i);  // legacy: all import the library
  }
  for (uint64_t i : order) carried.modules.push_back(loaded.at(i));
  return carried;
}

StatusOr<std::string> ReadGraph(const std::string& path, GraphSpec* spec) {
  SORUN_RETURN_IF_ERROR(CheckRegularFile(path, "graph"));
  SORUN_ASSIGN_OR_RETURN(std::string json, ReadFileToString(path));
  auto parsed = GraphSpec::Parse(json);
  if (!parsed.ok()) return std::move(parsed).status().Annotate(path);
  *spec = std::move(*parsed);
  return json;
}

// Params from a params file, each checked against the graph's inputs.
StatusOr<NamedTensors> ReadParams(const std::string& path, const std::string& graph_path, const GraphSpec& g) {
  SORUN_RETURN_IF_ERROR(CheckRegularFile(path, "params"));
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> file, MappedFile::Open(path));
  BinaryReader reader(file->data(), file->size(), path);
  auto params = ReadParamsDict(reader, /*allow_zero_copy=*/false);
  if (!params.ok()) return StartWithPath(std::move(params).status(), path);
  if (!reader.at_end()) return reader.Error(std::to_string(reader.remaining()) + " trailing bytes after the params");
  SORUN_RETURN_IF_ERROR(CheckParamsAgainstGraph(g, *params, ParamsOutsideGraph::kRefused, path, graph_path));
  return params;
}

StatusOr<Module> MakeDeviceModule(const DeviceCodeFile& dc) {
  SORUN_RETURN_IF_ERROR(CheckRegularFile(dc.code_path, "device code"));
  SORUN_RETURN_IF_ERROR(CheckRegularFile(dc.fmap_path, "kernel description"));
  SORUN_ASSIGN_OR_RETURN(KernelMap kernels, ReadFmapFile(dc.fmap_path));
  DeviceModulePayload payload;
  SORUN_ASSIGN_OR_RETURN(payload.data, ReadFileToString(dc.code_path));
  payload.functions = std::move(kernels);
  if (dc.type_key == keys::kTypeKeyCuda) {
    payload.fmt = CudaFormatFromExtension(dc.code_path);
    if (payload.fmt.empty()) {
      return InvalidArgument(dc.code_path + ": unknown CUDA code format (expected .ptx, .cubin or .fatbin)");
    }
    auto m = CreateCudaModule(std::move(payload));
    if (!m.ok()) return std::move(m).status().Annotate(dc.code_path + " with " + dc.fmap_path);
    return m;
  }
  payload.fmt = "cl";
  auto m = MakeOpenclPayloadModule(std::move(payload));
  if (!m.ok()) return std::move(m).status().Annotate(dc.code_path + " with " + dc.fmap_path);
  return m;
}

// Every kernel the graph calls must be an exported function of the written library.
Status CheckGraphKernelsExported(const std::string& path, const GraphSpec& g) {
  SORUN_ASSIGN_OR_RETURN(ModelFile file, ModelFile::Open(path));
  std::set<std::string> exported(file.host_functions().begin(), file.host_functions().end());
  for (uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const GraphNode& n = g.nodes[nid];
    if (n.is_input() || n.func_name == "__nop" || n.func_name == "__copy") continue;
    if (!exported.count(n.func_name)) {
      return NotFound("kernel '" + n.func_name + "' called by graph " + g.DescribeNode(nid) +
                      " is not exported by the host code (--lib files)");
    }
  }
  return Status::Ok();
}

Status MakeParentDirectory(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return FailedPrecondition("cannot create directory " + parent.string() + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

std::string HostFileKind(const std::string& path) {
  std::string ext = Extension(path);
  if (ext == ".o" || ext == ".obj") return "object";
  if (ext == ".a" || ext == ".lo") return "archive";  // .lo: Bazel's alwayslink archive
  if (ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".C" || ext == ".S" || ext == ".s") {
    return "source";
  }
  if (ext == ".tar") return "tar";
  if (ext == ".so") return "shared";
  return "";
}

std::string CudaFormatFromExtension(const std::string& path) {
  std::string ext = Extension(path);
  if (ext == ".ptx") return "ptx";
  if (ext == ".cubin") return "cubin";
  if (ext == ".fatbin") return "fatbin";
  return "";
}

// ---------------------------------------------------------------------------------------------------
// `sorun pack --lib X.so`: the library is already linked, so the blob (and the checksum record)
// are added to it by rewriting its dynamic symbol table (packer/elf_blob_injector.h).
// ---------------------------------------------------------------------------------------------------
Status PackFromSharedLibrary(const std::string& input_so, const std::string& blob_bytes_with_prefix,
                             const std::string& checksum_record, const std::string& output_so,
                             bool replace_existing_blob) {
  BlobInjectionOptions options;
  options.replace_existing = replace_existing_blob;
  return InjectBlobIntoSharedLibrary(input_so, blob_bytes_with_prefix, checksum_record, output_so, options);
}

namespace {

// Walks (and checks) a legacy container's cuda / opencl payload.
Status SkipDevicePayload(size_t index, const std::string& type_key, BinaryReader& reader) {
  if (type_key != keys::kTypeKeyOpenCL && type_key != keys::kTypeKeyCuda) {
    return Unimplemented("module " + std::to_string(index) + " ('" + type_key + "') has no known payload layout");
  }
  DeviceModulePayload payload;
  return ReadDeviceModulePayload(reader, type_key.c_str(), &payload);
}

}  // namespace

StatusOr<bool> IsRelaxExportFile(const std::string& path) { return relax::IsRelaxExport(path, SkipDevicePayload); }

StatusOr<relax::RelaxPackReport> PackRelaxExport(const std::string& input_so, const std::string& output_so,
                                                 bool checksum) {
  SORUN_RETURN_IF_ERROR(CheckOutputFile(output_so, "output"));
  SORUN_RETURN_IF_ERROR(CheckRegularFile(input_so, "Relax export"));
  SORUN_RETURN_IF_ERROR(MakeParentDirectory(output_so));
  relax::RelaxPackOptions options;
  options.checksum = checksum;
  options.device_payloads = SkipDevicePayload;
  return relax::PackRelaxLibrary(input_so, output_so, options);
}

StatusOr<PackResult> PackModel(const PackRequest& request) {
  if (request.output_path.empty()) return InvalidArgument("no output file (-o)");
  // Before any work: never rename a finished file over a device, FIFO, directory or link.
  SORUN_RETURN_IF_ERROR(CheckOutputFile(request.output_path, "output"));
  SORUN_RETURN_IF_ERROR(CheckOutputFile(request.output_path + ".sorun_tmp.tar", "temporary output"));
  if (request.lib_files.empty()) return InvalidArgument("no host code (--lib)");
  if (!request.params_path.empty() && request.graph_path.empty()) return InvalidArgument("--params needs --graph");

  // The graph and its params first: cheap, and the most likely mistakes.
  GraphSpec spec;
  std::string graph_json;
  NamedTensors params;
  if (!request.graph_path.empty()) {
    SORUN_ASSIGN_OR_RETURN(graph_json, ReadGraph(request.graph_path, &spec));
    if (!request.params_path.empty()) {
      SORUN_ASSIGN_OR_RETURN(params, ReadParams(request.params_path, request.graph_path, spec));
    }
  }
  std::vector<Module> device_modules;
  for (const DeviceCodeFile& dc : request.device_code) {
    SORUN_ASSIGN_OR_RETURN(Module m, MakeDeviceModule(dc));
    device_modules.push_back(std::move(m));
  }

  SORUN_ASSIGN_OR_RETURN(TempDir temp, TempDir::Create("sorun_pack"));
  HostCode code;
  std::string shared_library;
  bool replace_blob = false;
  int tar_index = 0;
  for (const std::string& file : request.lib_files) {
    SORUN_RETURN_IF_ERROR(CheckRegularFile(file, "host code"));
    std::string kind = HostFileKind(file);
    if (kind.empty()) {
      return InvalidArgument(file + ": unknown host code kind (expected .o, .a, .c, .cc, .cpp, .S, .s, .tar or .so)");
    }
    if (kind == "shared" || kind == "tar") {
      // A GPU build's kernel library brings its device modules along (TVM's three-file deployment).
      SORUN_ASSIGN_OR_RETURN(CarriedDeviceModules carried, DeviceModulesOfKernelLibrary(file, kind == "tar"));
      device_modules.insert(device_modules.end(), carried.modules.begin(), carried.modules.end());
      if (kind == "shared") {
        if (request.lib_files.size() != 1) {
          return InvalidArgument(file + ": a shared library cannot be combined with other --lib files");
        }
        shared_library = file;
        replace_blob = carried.has_blob;
        continue;
      }
      std::string dir = temp.path() + "/tar" + std::to_string(tar_index++);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return FailedPrecondition("cannot create " + dir + ": " + ec.message());
      SORUN_ASSIGN_OR_RETURN(std::vector<std::string> files, ExtractTarLibrary(file, dir, carried.blob_member));
      code.files.insert(code.files.end(), files.begin(), files.end());
    } else {
      if (kind == "object") {
        SORUN_ASSIGN_OR_RETURN(ObjectPtr<MappedFile> obj, MappedFile::Open(file));
        SORUN_RETURN_IF_ERROR(CheckObjectHasNoBlob(file, obj->data(), obj->size()));
      }
      code.files.push_back(file);
    }
  }
  const std::string include_dir = temp.path() + "/include";
  SORUN_RETURN_IF_ERROR(WriteEmbeddedHeaders(include_dir));
  for (const std::string& dir : request.include_dirs) code.compile_flags.push_back("-I" + dir);
  code.compile_flags.push_back("-I" + include_dir);
  code.compile_flags.insert(code.compile_flags.end(), request.compile_flags.begin(), request.compile_flags.end());
  code.link_flags = request.link_flags;

  Module host = MakeHostCodeModule(code);
  for (const Module& m : device_modules) SORUN_RETURN_IF_ERROR(host.Import(m));
  Module root = host;
  if (!request.graph_path.empty()) {
    auto factory = MakeGraphExecutorFactory(graph_json, params, host, request.module_name);
    if (!factory.ok()) return std::move(factory).status().Annotate(request.graph_path);
    root = *factory;
  }

  PackResult result;
  result.param_count = params.size();
  for (const auto& kv : params) result.param_bytes += kv.second.nbytes();
  SORUN_RETURN_IF_ERROR(MakeParentDirectory(request.output_path));

  if (!shared_library.empty()) {
    SORUN_ASSIGN_OR_RETURN(SerializedModuleTree tree, SerializeModuleTree(root));
    const std::string blob = MakeBlobBytes(tree.payload);
    const std::string record = request.checksum ? MakeBlobChecksumRecord(blob) : std::string();
    SORUN_RETURN_IF_ERROR(PackFromSharedLibrary(shared_library, blob, record, request.output_path, replace_blob));
    result.type_keys = tree.type_keys;
    result.blob_bytes = blob.size();
  } else {
    ExportOptions options;
    options.embedding = request.c_route ? BlobEmbedding::kCSource : BlobEmbedding::kAssembly;
    options.write_checksum = request.checksum;
    const bool ends_in_tar = Extension(request.output_path) == ".tar";
    result.is_tar = request.tar || ends_in_tar;
    // The exporter picks .tar by the extension: go through a temporary .tar name when needed.
    std::string target = request.output_path;
    if (result.is_tar && !ends_in_tar) target = request.output_path + ".sorun_tmp.tar";
    auto report = ExportLibrary(root, target, options);
    if (!report.ok()) {
      std::remove(target.c_str());
      return std::move(report).status().Annotate("packing " + request.output_path);
    }
    if (target != request.output_path && std::rename(target.c_str(), request.output_path.c_str()) != 0) {
      std::remove(target.c_str());
      return FailedPrecondition("cannot write " + request.output_path);
    }
    if (report->blob_bytes > 0) result.type_keys = report->type_keys;
    result.blob_bytes = report->blob_bytes;
  }
  result.output_path = request.output_path;

  // What was written: size, checksum, and (for a .so) that the graph's kernels are there.
  if (!result.is_tar && !request.graph_path.empty()) {
    Status s = CheckGraphKernelsExported(request.output_path, spec);
    if (!s.ok()) {
      std::remove(request.output_path.c_str());
      return std::move(s).Annotate(request.output_path);
    }
  }
  auto written = ModelFile::Open(request.output_path);
  if (!written.ok()) return NamePath(std::move(written).status(), request.output_path);
  result.output_bytes = written->file_size();
  if (written->checksum() != nullptr) {
    auto record = written->ReadChecksumRecord();
    if (record.ok()) result.checksum_hash = Xxh64ToHex(record->hash);
  }
  return result;
}

}  // namespace sorun
