// ModelSession: what `sorun run` and `sorun bench` add to the public API (api/sorun.h). The model is
// loaded with sorun::Model::Load (or Model::LoadFromFiles for the three-file path, MODEL being the
// kernel library) and run by a sorun::Executor on one device; the session times loading, creation
// and warmup, binds inputs from .npy files (or deterministic pseudo-random values), runs with device
// synchronisation and fetches outputs to the host.
//
// Before loading, the library is read as bytes (ModelFile): a non-ELF, malformed or truncated file is
// an error naming it, never a crash inside dlopen().
//
// Input rules: a name that is not a graph input is an error listing the inputs; a file whose dtype or
// shape differs from the graph input is an error naming both; a graph input that is neither a bound
// parameter nor given is an error naming it (unless filling is asked for). Errors name the file.
// Not thread-safe (one executor).
#ifndef SORUN_TOOLS_CLI_MODEL_SESSION_H_
#define SORUN_TOOLS_CLI_MODEL_SESSION_H_

#include <dlpack/dlpack.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/sorun.h"
#include "base/status.h"
#include "runtime/startup_timings.h"
#include "runtime/tensor.h"
#include "tools/cli/model_protection.h"

namespace sorun {
namespace cli {

struct ModelSource {
  std::string model_path;
  std::string graph_path;   // set: three-file deployment (MODEL is the kernel library)
  std::string params_path;  // optional, only with graph_path
  bool verify_checksum = true;
  RuntimeOptions::Prefetch prefetch = RuntimeOptions{}.prefetch;  // the library's default unless --prefetch
  bool warm_executor = false;  // call Executor::Warmup() after creating the executor (timed apart)
  bool cuda_graph = false;     // ExecutorOptions::cuda_graph
  ProtectionFlags protection;  // --key / --public-key: the load hooks (tools/cli/model_protection.h)
};

// One --input NAME=FILE.npy.
struct InputFile {
  std::string name;
  std::string path;
};

// Parses --input values; InvalidArgument (a usage error) for a missing '=', an empty name or path, or a
// name given twice.
StatusOr<std::vector<InputFile>> ParseInputFlags(const std::vector<std::string>& values);

class ModelSession {
 public:
  // Loads the model and creates an executor on `device` (Unavailable when the device is absent).
  // Times both steps (load_ms, create_ms).
  static StatusOr<std::unique_ptr<ModelSession>> Open(const ModelSource& source, DLDevice device);

  const Model& model() const { return *model_; }
  Executor& executor() { return *executor_; }
  DLDevice device() const { return device_; }
  double load_ms() const { return load_ms_; }
  double create_ms() const { return create_ms_; }
  double warmup_ms() const { return warmup_ms_; }  // 0 unless ModelSource::warm_executor
  // The device start-up work (runtime/startup_timings.h) done by loading and by creating the executor:
  // driver, context, device code, weight upload. Zero on the CPU and when the process did it before.
  const StartupTimings& cold_start() const { return cold_start_; }

  // Binds `inputs`; with `fill_missing`, every unbound non-parameter input gets deterministic
  // pseudo-random values (its name is appended to `filled`), otherwise it is an error.
  Status BindInputs(const std::vector<InputFile>& inputs, bool fill_missing, std::vector<std::string>* filled);
  // Runs once and waits for the device.
  Status Run();
  // Waits until the device is idle.
  Status Sync();
  // Output `index` of the last run copied to a new compact CPU tensor (the run's shape).
  StatusOr<Tensor> OutputOnHost(int index);
  // Its name: the model's, or "output_<index>" for a model that describes its outputs only by running.
  std::string OutputName(int index) const;

 private:
  ModelSession() = default;
  std::string InputList() const;

  ModelSource source_;
  DLDevice device_{kDLCPU, 0};
  std::optional<Model> model_;
  std::optional<Executor> executor_;
  double load_ms_ = 0;
  double create_ms_ = 0;
  double warmup_ms_ = 0;
  StartupTimings cold_start_;
};

// Fills `tensor` (a CPU tensor) with values derived from `seed_name` only: floats in [-1, 1), integers
// in [0, 10), booleans 0/1.
void FillPseudoRandom(const Tensor& tensor, const std::string& seed_name);

// Up to `max_values` leading elements of a CPU tensor, formatted ("[0.25, 1, ...]").
std::string FormatLeadingValues(const Tensor& tensor, int max_values);

// Milliseconds since an arbitrary epoch (steady clock).
double NowMs();

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_MODEL_SESSION_H_
