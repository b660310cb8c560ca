// The two fuzz bodies that work on whole shared libraries (declared in fuzz/fuzz_targets.h):
//
//   FuzzElfInject  the ELF blob injector (packer/elf_blob_injector.h) on a fuzzed library and
//                  a fuzzed blob; a success must be a library that passes the loader's ELF preflight
//                  and ElfImage, whose injected blob and checksum record read back equal, whose old
//                  dynamic symbols are unchanged, and that cannot be injected into again.
//   FuzzModelLoad  a fuzzed blob (and optionally a fuzzed length prefix, st_size and st_value of
//                  `__tvm_dev_mblob`) spliced into a fixed real kernel library, written to a file with
//                  a unique name, then sorun::Load + CreateExecutor on the CPU, then unloaded; the
//                  library must be gone afterwards. No kernel is ever run.
//
// Unlike the parser bodies of fuzz_targets.cc these touch the file system: a private temporary
// directory (TMPDIR, e.g. bazel's TEST_TMPDIR) removed at exit. FuzzModelLoad dlopen()s what it wrote.
// Only DATA is fuzzed there: the kernel library's code and constructors are fixed (a library is code
// and trusted when loaded; the blob is data and never is), see fuzz/README.md.
//
// Input layouts (little-endian):
//   FuzzElfInject: u8 flags | u16 n | n bytes ELF image | the rest: blob payload
//     flags: 1 = add a checksum record, 2 = replace_existing, 4 = the rest is the whole blob as is
//     (length prefix included, not fixed up), 8 = also run the file variant
//     InjectBlobIntoSharedLibrary and compare its output
//   FuzzMemoryLoad the same library from memory (LoadModuleFromMemory: a sealed memfd, never a file),
//                  optionally cut short or through the decrypt/verify hooks; released, it must leave no
//                  library mapped and no descriptor open.
//
//   FuzzModelLoad, FuzzMemoryLoad: 32-byte header | the rest: blob payload (the length prefix is written for it)
//     header[0] flags: 1 = add a checksum record, 2 = LoadOptions::verify_checksum,
//     4 = overwrite the length prefix with header[8..16), 8 = set st_size to header[16..24),
//     16 = add header[24..32) to st_value (mod 2^64); FuzzMemoryLoad also: 32 = cut the library to
//     header[8..16) mod (size + 1) bytes, 64 = load through an identity decrypt hook and a verifier
//
// Thread-compatible (one body at a time, like every fuzz body).
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/model_loading.h"
#include "base/file_util.h"
#include "base/subprocess.h"
#include "format/elf_preflight.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_targets.h"
#include "graph_executor/graph_executable.h"
#include "inspect/elf_reader.h"
#include "packer/elf_blob_injector.h"
#include "packer/exporter.h"
#include "runtime/data_type.h"
#include "runtime/registry_keys.h"
#include "serialization/blob_checksum.h"
#include "serialization/module_blob.h"

namespace sorun {
namespace fuzz {
namespace {

// The fixed kernel library FuzzModelLoad splices blobs into: the model zoo's operators
// (testdata/kernels/nn_kernels.c) linked by the system compiler, a runfile of the fuzz binaries and
// of //tests/fuzz:regression_test.
constexpr char kKernelLibrary[] = "testdata/kernels/libnn_kernels_gnu_hash.so";

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void StoreU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The private temporary directory, removed when the process exits normally (libFuzzer exits with
// exit() at the end of a run).
const std::string& WorkDir() {
  static TempDir* dir = [] {
    auto created = TempDir::Create("sorun_fuzz_load");
    FUZZ_CHECK(created.ok(), created.status().ToString());
    auto* d = new TempDir(std::move(*created));
    std::atexit([] { delete dir; });
    return d;
  }();
  return dir->path();
}

// A fresh path in WorkDir(): dlopen() recognises a library by path and by inode, so each load gets a
// name of its own and the file is removed after the library is unloaded.
std::string FreshPath(const char* stem) {
  static uint64_t counter = 0;
  return WorkDir() + "/" + stem + std::to_string(counter++) + ".so";
}

const std::string& KernelLibraryBytes() {
  static const std::string* bytes = [] {
    auto read = ReadFileToString(FindRunfile(kKernelLibrary, "SORUN_FUZZ_KERNEL_LIBRARY"));
    FUZZ_CHECK(read.ok(), read.status().ToString());
    return new std::string(std::move(*read));
  }();
  return *bytes;
}

// The file variant of the injector on the same input must agree with the in-memory one.
void CheckFileVariant(std::string_view elf, const std::string& blob, const std::string& record,
                      const BlobInjectionOptions& options, const StatusOr<std::string>& in_memory) {
  const std::string in = FreshPath("inject_in");
  const std::string out = FreshPath("inject_out");
  FUZZ_CHECK(WriteFileBytes(in, elf).ok(), "writing " + in);
  Status s = InjectBlobIntoSharedLibrary(in, blob, record, out, options);
  FUZZ_CHECK(s.ok() == in_memory.ok(), "file and in-memory injection agree: " + s.ToString());
  if (s.ok()) {
    auto written = ReadFileToString(out);
    FUZZ_CHECK(written.ok() && *written == *in_memory, "file variant writes the in-memory output");
  }
  unlink(in.c_str());
  unlink(out.c_str());
}

// Every invariant of a successful injection.
void CheckInjected(std::string_view input, const std::string& output, const std::string& blob,
                   const std::string& record, const BlobInjectionOptions& options, const BlobInjectionReport& report) {
  const auto* out = reinterpret_cast<const uint8_t*>(output.data());
  FUZZ_CHECK(report.output_bytes == output.size(), "report.output_bytes");
  // The structure a loader checks, for the input's architecture (the corpus holds x86-64 files, also
  // replayed on aarch64): the injector keeps e_machine.
  Status preflight = PreflightSharedLibraryBytes(out, output.size(), "injected.so", /*machine=*/0);
  FUZZ_CHECK(preflight.ok(), "the injected library passes the loader's preflight: " + preflight.ToString());
  FUZZ_CHECK(output.size() >= 20 && input.size() >= 20 && std::memcmp(out + 18, input.data() + 18, 2) == 0,
             "the injected library keeps the input's e_machine");
  auto image = ElfImage::Parse(out, output.size(), "injected.so");
  FUZZ_CHECK(image.ok(), "the injected library parses: " + image.status().ToString());
  auto sym = image->FindSymbolData(keys::kSymbolDevMblob);
  FUZZ_CHECK(sym.ok(), sym.status().ToString());
  FUZZ_CHECK(sym->size == blob.size() && std::memcmp(sym->data, blob.data(), blob.size()) == 0,
             "the blob reads back equal");
  FUZZ_CHECK(sym->address == report.blob_address && sym->file_offset == report.blob_offset,
             "the blob is where the report says");
  FUZZ_CHECK(sym->address % 64 == 0, "the blob is 64-byte aligned");
  auto prefix = ReadBlobPrefix(sym->data, sym->size, "injected blob");
  FUZZ_CHECK(prefix.ok() && *prefix == blob.size() - 8, "the blob's prefix reads back");
  if (!record.empty()) {
    auto rec = image->FindSymbolData(keys::kSymbolBlobChecksum);
    FUZZ_CHECK(rec.ok(), rec.status().ToString());
    FUZZ_CHECK(rec->size == record.size() && std::memcmp(rec->data, record.data(), record.size()) == 0,
               "the checksum record reads back equal");
    Status verified = VerifyBlobChecksum(sym->data, sym->size, rec->data, rec->size);
    FUZZ_CHECK(verified.ok(), verified.ToString());
  }
  // The old dynamic symbols keep their indices, names, values and sizes (relocations name them by index).
  auto before = ElfImage::Parse(reinterpret_cast<const uint8_t*>(input.data()), input.size(), "input.so");
  FUZZ_CHECK(before.ok(), "an input the injector accepts parses: " + before.status().ToString());
  const auto& old_syms = before->dynamic_symbols();
  const auto& new_syms = image->dynamic_symbols();
  FUZZ_CHECK(new_syms.size() >= old_syms.size(), "no dynamic symbol is dropped");
  for (size_t i = 0; i < old_syms.size(); ++i) {
    const ElfSymbol& a = old_syms[i];
    const ElfSymbol& b = new_syms[i];
    FUZZ_CHECK(a.name == b.name, "dynamic symbol " + std::to_string(i) + " keeps its name");
    const bool replaced =
        options.replace_existing && (a.name == keys::kSymbolDevMblob || a.name == keys::kSymbolBlobChecksum);
    if (!replaced) {
      FUZZ_CHECK(a.value == b.value && a.size == b.size && a.info == b.info,
                 "dynamic symbol " + std::string(a.name) + " unchanged");
    }
  }
  // Packed once is packed: a second injection without replace_existing is refused.
  auto again = InjectBlobIntoElfImage(output, "injected.so", blob, record);
  FUZZ_CHECK(!again.ok() && again.status().code() == StatusCode::kAlreadyExists,
             "re-injection is refused as already packed: " + again.status().ToString());
}

}  // namespace

int FuzzElfInject(const uint8_t* data, size_t size) {
  Init();
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  size_t n = static_cast<size_t>(data[1]) | static_cast<size_t>(data[2]) << 8;
  if (n > size - 3) n = size - 3;
  std::string_view elf(reinterpret_cast<const char*>(data + 3), n);
  std::string_view rest(reinterpret_cast<const char*>(data + 3 + n), size - 3 - n);
  const std::string blob = (flags & 4) ? std::string(rest) : MakeBlobBytes(std::string(rest));
  const std::string record = (flags & 1) ? MakeBlobChecksumRecord(blob) : std::string();
  BlobInjectionOptions options;
  options.replace_existing = (flags & 2) != 0;
  BlobInjectionReport report;
  StatusOr<std::string> out = InjectBlobIntoElfImage(elf, "fuzz.so", blob, record, options, &report);
  Note("elf_inject", out.status());
  if (out.ok()) CheckInjected(elf, *out, blob, record, options, report);
  if (flags & 8) CheckFileVariant(elf, blob, record, options, out);
  return 0;
}

namespace {

// Writes `bytes` to a fresh file, loads it, creates a CPU executor when the plan is small, unloads,
// and checks the library is unloaded before the file is removed.
// What a fuzz body does with a loaded model: plan, make a CPU executor when small, read its outputs.
void UseModel(const StatusOr<Module>& model) {
  {
    if (model.ok()) {
      auto factory = GetFactory(*model);
      Note("model_load", factory.status());
      if (factory.ok()) {
        const GraphSpec& graph = *(*factory)->graph();
        std::vector<bool> bound(graph.num_entries(), false);
        auto plan = PlanMemory(graph, {CpuDevice()}, bound);
        Note("model_load", plan.status());
        if (plan.ok() && SmallEnoughToRun(graph, *plan)) {
          auto exec = CreateExecutor(*model, {CpuDevice()});
          Note("model_load", exec.status());
          if (exec.ok()) {
            (*exec)->InputInfo(true);
            (*exec)->OutputInfo();
            for (int i = 0; i < (*exec)->num_outputs(); ++i) FUZZ_CHECK((*exec)->GetOutput(i).ok(), "output");
          }
        }
      }
    }
  }
}

void LoadOnce(const std::string& bytes, const LoadOptions& options) {
  const std::string path = FreshPath("model");
  FUZZ_CHECK(WriteFileBytes(path, bytes).ok(), "writing " + path);
  {
    StatusOr<Module> model = Load(path, options);
    Note("model_load", model.status());
    UseModel(model);
  }
  // Everything released: the library must be unloaded (else every load would leak a mapping).
  void* still = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (still != nullptr) dlclose(still);
  FUZZ_CHECK(still == nullptr, path + " is still loaded after its model was released");
  unlink(path.c_str());
}

// The library FuzzModelLoad's input layout describes (a 32-byte header and a blob payload), or "" when
// the input is shorter than the header.
std::string FuzzedLibrary(const uint8_t* data, size_t size) {
  constexpr size_t kHeader = 32;
  if (size < kHeader) return std::string();
  const uint8_t flags = data[0];
  const std::string payload(reinterpret_cast<const char*>(data + kHeader), size - kHeader);
  const std::string blob = MakeBlobBytes(payload);
  const std::string record = (flags & 1) ? MakeBlobChecksumRecord(blob) : std::string();
  BlobInjectionReport report;
  StatusOr<std::string> injected =
      InjectBlobIntoElfImage(KernelLibraryBytes(), kKernelLibrary, blob, record, {}, &report);
  FUZZ_CHECK(injected.ok(), "the kernel library takes any blob: " + injected.status().ToString());
  std::string bytes = std::move(*injected);
  auto* out = reinterpret_cast<uint8_t*>(&bytes[0]);
  if (flags & 4) StoreU64(out + report.blob_offset, LoadU64(data + 8));
  if (flags & (8 | 16)) {
    // The .dynsym entry the dynamic loader (dlsym, dladdr1) reads: st_value at +8, st_size at +16.
    auto image = ElfImage::Parse(out, bytes.size(), "model.so");
    FUZZ_CHECK(image.ok(), image.status().ToString());
    const ElfSymbol* sym = nullptr;
    for (const ElfSymbol& s : image->dynamic_symbols()) {
      if (s.name == keys::kSymbolDevMblob) sym = &s;
    }
    FUZZ_CHECK(sym != nullptr, "the injected .dynsym entry");
    const uint64_t entry = sym->entry_offset;
    if (flags & 8) StoreU64(out + entry + 16, LoadU64(data + 16));
    if (flags & 16) StoreU64(out + entry + 8, LoadU64(out + entry + 8) + LoadU64(data + 24));
  }
  return bytes;
}

// Objects in the process's link map and open descriptors: a load from memory that was released must
// leave both as they were (no library left mapped, no memfd left open).
int LoadedObjectCount() {
  int n = 0;
  dl_iterate_phdr([](struct dl_phdr_info*, size_t, void* count) { return ++*static_cast<int*>(count), 0; }, &n);
  return n;
}

int OpenDescriptorCount() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd) n += fcntl(fd, F_GETFD) != -1 ? 1 : 0;
  return n;
}

}  // namespace

int FuzzModelLoad(const uint8_t* data, size_t size) {
  Init();
  const std::string bytes = FuzzedLibrary(data, size);
  if (bytes.empty()) return 0;
  LoadOptions options;
  options.verify_checksum = (data[0] & 2) != 0;
  LoadOnce(bytes, options);
  return 0;
}

int FuzzMemoryLoad(const uint8_t* data, size_t size) {
  Init();
  std::string bytes = FuzzedLibrary(data, size);
  if (bytes.empty()) return 0;
  const uint8_t flags = data[0];
  // Flag 32: cut the library to a fuzzed length (bytes 4-7, modulo its size): a truncated download.
  if (flags & 32) bytes.resize(LoadU64(data + 8) % (bytes.size() + 1));
  LoadOptions options;
  options.verify_checksum = (flags & 2) != 0;
  // Flag 64: through the hooks (an identity decrypt writing odd-sized pieces, a verifier that accepts
  // only what the decrypt hook wrote), the path a signed or encrypted model takes.
  size_t verified = 0;
  if (flags & 64) {
    options.decrypt = [](std::string_view stored, PlaintextSink& sink, const std::string&) {
      for (size_t at = 0; at < stored.size(); at += 4093) {
        const std::string_view piece = stored.substr(at, 4093);
        SORUN_RETURN_IF_ERROR(sink.Write(piece.data(), piece.size()));
      }
      return Status::Ok();
    };
    options.verify_library = [&verified](std::string_view library, const std::string&) {
      verified = library.size();
      return Status::Ok();
    };
  }
  const int objects = LoadedObjectCount();
  const int descriptors = OpenDescriptorCount();
  {
    StatusOr<Module> model = LoadModuleFromMemory(bytes, "fuzzed.so", options);
    Note("memory_load", model.status());
    if (!model.ok()) {
      FUZZ_CHECK(model.status().message().rfind("fuzzed.so", 0) == 0,
                 "a memory load error names the model: " + model.status().ToString());
    }
    if ((flags & 64) && model.ok()) FUZZ_CHECK(verified == bytes.size(), "the verifier saw the exact library");
    UseModel(model);
  }
  FUZZ_CHECK(LoadedObjectCount() == objects, "a released model from memory left a library mapped");
  FUZZ_CHECK(OpenDescriptorCount() == descriptors, "a released model from memory left a descriptor open");
  return 0;
}

}  // namespace fuzz
}  // namespace sorun
