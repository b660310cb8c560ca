#include "serving/triton/config_parameters.h"

#include <string_view>

#include "api/sorun.h"

namespace sorun::triton {
namespace {

constexpr char kKnownKeys[] =
    "model_file, device, num_threads, verify_checksum, warmup, load_from_memory, sorun_public_key, cuda_graph";

Status BadValue(const std::string& key, const std::string& value, std::string_view accepted) {
  return InvalidArgument("config.pbtxt parameter '" + key + "' is '" + value + "': " + std::string(accepted));
}

StatusOr<bool> ParseBool(const std::string& key, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return BadValue(key, value, "use true or false (or 1 / 0)");
}

// A file name inside the version directory: no directory part, not "." or "..".
Status CheckModelFileName(const std::string& key, const std::string& value) {
  if (value.empty() || value == "." || value == ".." || value.find('/') != std::string::npos ||
      value.find('\0') != std::string::npos) {
    return BadValue(key, value, "use a file name inside the model's version directory (e.g. model.so), without '/'");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SorunParameters> ParseSorunParameters(const std::map<std::string, std::string>& parameters,
                                               const std::string& default_model_filename) {
  SorunParameters out;
  if (!default_model_filename.empty()) {
    SORUN_RETURN_IF_ERROR(CheckModelFileName("default_model_filename", default_model_filename));
    out.model_file = default_model_filename;
    out.model_file_from_default = true;
  }
  for (const auto& [key, value] : parameters) {
    if (key == "model_file") {
      SORUN_RETURN_IF_ERROR(CheckModelFileName(key, value));
      out.model_file = value;
      out.model_file_from_default = false;
    } else if (key == "device") {
      StatusOr<DLDevice> device = ParseDevice(value);
      if (!device.ok()) return BadValue(key, value, device.status().message());
      out.device = value;
    } else if (key == "num_threads") {
      bool digits = !value.empty() && value.size() <= 4 && value.find_first_not_of("0123456789") == std::string::npos;
      int threads = digits ? std::stoi(value) : 0;
      if (!digits || threads < 1 || threads > 1024) {
        return BadValue(key, value, "use a whole number from 1 to 1024 (CPU threads per instance)");
      }
      out.num_threads = threads;
    } else if (key == "verify_checksum") {
      SORUN_ASSIGN_OR_RETURN(out.verify_checksum, ParseBool(key, value));
    } else if (key == "warmup") {
      SORUN_ASSIGN_OR_RETURN(out.warmup, ParseBool(key, value));
    } else if (key == "cuda_graph") {
      SORUN_ASSIGN_OR_RETURN(out.cuda_graph, ParseBool(key, value));
    } else if (key == "load_from_memory") {
      if (value == "auto") {
        out.load_from = SorunParameters::LoadFrom::kAuto;
      } else {
        StatusOr<bool> memory = ParseBool(key, value);
        if (!memory.ok()) return BadValue(key, value, "use true, false or auto (or 1 / 0)");
        out.load_from = *memory ? SorunParameters::LoadFrom::kMemory : SorunParameters::LoadFrom::kFile;
      }
    } else if (key == "sorun_public_key") {
      if (value.empty() || value[0] != '/' || value.find('\0') != std::string::npos) {
        return BadValue(key, value, "use the absolute path of an Ed25519 public key PEM file");
      }
      out.public_key_path = value;
    } else {
      return InvalidArgument("config.pbtxt has unknown parameter '" + key + "'; the sorun backend accepts " +
                             kKnownKeys);
    }
  }
  return out;
}

}  // namespace sorun::triton
