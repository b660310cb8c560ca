// The two hooks a loader calls on a model file's bytes before anything in it runs: one that turns the
// stored bytes into the library's plaintext (decryption on the way in) and one that judges the library's
// bytes before dlopen (a signature check). Part of the public API (api/sorun.h includes this header
// through RuntimeOptions), so it depends on base/status.h and the C++ library only.
//
// Who calls them: the loader (serialization/loader.h), on the thread that loads, once per load; a hook
// shared by many loads must be thread-safe itself. Neither hook may keep a pointer into the bytes it is
// given after it returns. sorun links no cryptography: ready hooks (Ed25519 signatures, AES-256-GCM)
// are in the optional //security package.
#ifndef SORUN_BASE_LOAD_HOOKS_H_
#define SORUN_BASE_LOAD_HOOKS_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sorun {

// Where a DecryptHook writes the plaintext: an anonymous, sealed-after-writing memory file (memfd), so
// the plaintext never reaches a file system. Owned by the loader; valid only during the hook call.
class PlaintextSink {
 public:
  virtual ~PlaintextSink() = default;
  // Appends `size` bytes. ResourceExhausted / Internal when the memory file cannot grow.
  virtual Status Write(const void* data, size_t size) = 0;
  // Optional: the plaintext's final size, when known, so the memory file is sized once.
  virtual Status Reserve(size_t size) = 0;
};

// Receives the stored bytes (the file, or the caller's buffer) and writes the library's plaintext to
// `plaintext`. A non-OK status (wrong key, failed authentication) fails the load with that status,
// annotated with the model's name; nothing was mapped or run. `name` is the file path or the name
// given for bytes from memory (for messages).
using DecryptHook = std::function<Status(std::string_view stored, PlaintextSink& plaintext, const std::string& name)>;

// Receives the library's exact bytes (after decryption, if any) before dlopen: OK lets the load go on,
// anything else refuses it with that status (PermissionDenied: "model.so: no sorun signature"); nothing
// of the library has run, its constructors included. The bytes checked are the bytes mapped: the loader
// copies a file into a sealed memory file first, so the file cannot change between check and dlopen.
using LibraryVerifier = std::function<Status(std::string_view library, const std::string& name)>;

}  // namespace sorun

#endif  // SORUN_BASE_LOAD_HOOKS_H_
