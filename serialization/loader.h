// LoadModule (TVM's runtime.load_module for shared libraries): one file in, the module tree out.
//
//   .so (also .dll/.dylib/.dso): dlopen (RTLD_NOW | RTLD_LOCAL), fill the context slots, then
//     - no __tvm_dev_mblob: the kernel library itself is the root;
//     - a blob with _import_tree: every entry is rebuilt ("_lib" = the kernel library, other keys by
//       the loader registered as runtime.module.loadbinary_<key>), imports are restored from the CSR
//       tree and module 0 is the root (normally the GraphExecutorFactory);
//     - a blob without _import_tree (pre-v0.7 exporters): the kernel library is the root and imports
//       every loaded module in blob order.
//   other extensions: the loader registered as runtime.module.loadfile_<ext> (TVM's convention);
//     .tar support (serialization/tar_loader.h) links the archived objects with the system compiler
//     and loads the result as above (with the same checksum choice: the resolved
//     LoadOptions::verify_checksum is passed to the loader as its second argument).
// __tvm_module_ctx of the library points at the kernel-library module. The blob is parsed in place
// (zero-copy; parameter tensors may point into the mapped file) and fully validated before any
// import is attached, so a failed load leaves nothing behind. Loading is thread-safe; two loads of
// the same file share the kernel-library module and its device modules.
#ifndef SORUN_SERIALIZATION_LOADER_H_
#define SORUN_SERIALIZATION_LOADER_H_

#include <optional>
#include <string>
#include <string_view>

#include "base/file_util.h"
#include "base/load_hooks.h"
#include "base/memory_file.h"

#include "base/status.h"
#include "runtime/module.h"

namespace sorun {

struct LoadOptions {
  // Verify the __sorun_blob_checksum record when the library (or the linked `.tar` export, whose
  // devc.o carries the record) has one. Precedence: an explicit value set here wins; left unset, the
  // environment variable SORUN_VERIFY_CHECKSUM decides (1 on, 0 off, any other non-empty value makes
  // Load fail with InvalidArgument); without either the check is off: it is one XXH64 pass over the
  // whole blob (~45 ms for 256 MiB of weights, 160x the in-place load itself, bench/README.md), and
  // integrity is a property of the file, checked once at deploy time by `sorun verify` (the CLI's
  // run/bench verify by default).
  std::optional<bool> verify_checksum;

  // What Load does to the module blob's pages (graph, weights, device code) of a shared library:
  //   kNone      nothing; pages come in as they are first touched (the first run faults the weights in).
  //   kWillNeed  madvise(MADV_WILLNEED): the kernel starts reading the blob into the page cache in the
  //              background while Load and executor creation go on. Nothing is mapped into the process
  //              (no RSS), the call returns at once; it matters when the file is not already cached
  //              (cold start), and costs nothing measurable when it is (docs/performance.md).
  //   kPopulate  madvise(MADV_POPULATE_READ) (Linux 5.14+; kWillNeed on older kernels): maps every blob
  //              page before Load returns, so the first run takes no faults on in-place weights, but
  //              Load itself takes that time and the RSS of the whole blob, whether or not it is run.
  // Default kWillNeed. A failing madvise is ignored (the pages still come in on first touch).
  enum class Prefetch { kNone, kWillNeed, kPopulate };
  Prefetch prefetch = Prefetch::kWillNeed;

  // base/load_hooks.h. With either set, a file's bytes go through a sealed memory file (LoadModuleFromMemory)
  // rather than being dlopen'ed by path: decrypt writes the plaintext there, verify_library judges it
  // before dlopen.
  DecryptHook decrypt;
  LibraryVerifier verify_library;
};

// The checksum choice `options` resolves to (the precedence above). InvalidArgument for an
// unusable SORUN_VERIFY_CHECKSUM when the option is unset. Thread-safe (reads the environment).
StatusOr<bool> ResolveVerifyChecksum(const LoadOptions& options);

StatusOr<Module> LoadModule(const std::string& path, const LoadOptions& options = {});

// A library's bytes as every protected load checks them: sealed in an anonymous memory file (the plaintext
// options.decrypt writes, else a copy of `stored`) and, when options.verify_library is set, judged on those
// sealed bytes. Errors name `name`. The first half of LoadModuleFromMemory; also for tools that read a
// protected model without loading it (`sorun inspect` / `verify` with --key / --public-key).
struct SealedLibrary {
  MemoryFile file;
  ObjectPtr<MappedFile> bytes;  // a read-only mapping of `file`
};
StatusOr<SealedLibrary> SealLibraryBytes(std::string_view stored, const std::string& name,
                                         const LoadOptions& options = {});

// A shared library from bytes: (options.decrypt, if set, turns them into the plaintext) copied into an
// anonymous memfd, sealed, judged by options.verify_library (first: nothing parses the bytes before it),
// checked like a file (PreflightSharedLibraryBytes), then dlopen'ed as /proc/self/fd/N and loaded as
// LoadModule loads a .so. `name` stands for the path in every message. The memfd stays open while the
// library is mapped. Unimplemented without memfd_create.
StatusOr<Module> LoadModuleFromMemory(std::string_view bytes, const std::string& name, const LoadOptions& options = {});

}  // namespace sorun

#endif  // SORUN_SERIALIZATION_LOADER_H_
