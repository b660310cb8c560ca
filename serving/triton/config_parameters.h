// The sorun backend's own settings, read from the `parameters` of a model's config.pbtxt:
//
//   parameters: { key: "model_file"      value: { string_value: "model.so" } }  # in the version dir
//   parameters: { key: "device"          value: { string_value: "opencl:0" } }  # default: the instance kind
//   parameters: { key: "num_threads"     value: { string_value: "2" } }         # per instance
//   parameters: { key: "verify_checksum" value: { string_value: "true" } }
//   parameters: { key: "warmup"          value: { string_value: "false" } }
//   parameters: { key: "load_from_memory" value: { string_value: "auto" } }    # true / false / auto
//   parameters: { key: "sorun_public_key" value: { string_value: "/keys/models.pub.pem" } }
//
// Parsed strictly (like the SORUN_* variables): an unknown key or a malformed value is an error that
// fails the model's load and names the key, the value and what is accepted. A plain value;
// thread-compatible.
#ifndef SORUN_SERVING_TRITON_CONFIG_PARAMETERS_H_
#define SORUN_SERVING_TRITON_CONFIG_PARAMETERS_H_

#include <map>
#include <optional>
#include <string>

#include "base/status.h"

namespace sorun::triton {

inline constexpr char kDefaultModelFile[] = "model.so";

struct SorunParameters {
  // The model library, a file name inside the version directory: `model_file`, else the config's
  // default_model_filename, else "model.so". (ModelState loads model.so when default_model_filename
  // names a missing file: Triton sets "model.sorun" for a "<name>.sorun" directory without config.)
  std::string model_file = kDefaultModelFile;
  bool model_file_from_default = false;  // model_file is the config's default_model_filename
  // A sorun device string ("cpu", "opencl:1", "cuda:0"; sorun::ParseDevice). Empty: the instance
  // group's kind decides (KIND_GPU: cuda:<device id>; otherwise cpu:0).
  std::string device;
  // CPU threads of each instance's executor (1..1024). 0 (unset): the machine's hardware threads
  // divided among the model's CPU instances, at least 1.
  int num_threads = 0;
  // Verify the blob checksum at load. Unset: sorun's default (SORUN_VERIFY_CHECKSUM, else off).
  std::optional<bool> verify_checksum;
  // Touch the weights and activation pools when an instance starts, so the first request does not
  // pay the page faults. Default true.
  bool warmup = true;
  // How the library is loaded: kFile dlopens the repository's file (the page cache shares its weights
  // with every process serving the same file); kMemory reads the file's bytes and loads them with
  // sorun::Model::LoadFromMemory (a sealed memfd: nothing is mapped from the file, which may then be
  // deleted or replaced); kAuto (the default) is kMemory only for a model whose files Triton wrote to a
  // temporary directory (a load request's "file:" override, model_state.cc), kFile otherwise.
  enum class LoadFrom { kAuto, kFile, kMemory };
  LoadFrom load_from = LoadFrom::kAuto;
  // An Ed25519 public key (PEM file path): the library must carry a sorun signature by the matching
  // private key (`sorun pack --sign`), checked before dlopen (RuntimeOptions::verify_library). Empty:
  // no signature check.
  std::string public_key_path;
  // Each instance's executor records a run as a CUDA graph and replays it (ExecutorOptions::cuda_graph;
  // KIND_GPU instances). Default false. A run that cannot be recorded runs as usual; the reason is logged
  // once per instance.
  bool cuda_graph = false;
};

// Reads `parameters` (key -> string_value). `default_model_filename` is the config's field of that
// name ("" when absent). InvalidArgument naming the key for an unknown key or a bad value.
StatusOr<SorunParameters> ParseSorunParameters(const std::map<std::string, std::string>& parameters,
                                               const std::string& default_model_filename);

}  // namespace sorun::triton

#endif  // SORUN_SERVING_TRITON_CONFIG_PARAMETERS_H_
