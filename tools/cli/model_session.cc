#include "tools/cli/model_session.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "base/file_checks.h"
#include "base/half.h"
#include "inspect/model_file.h"
#include "runtime/data_type.h"
#include "runtime/device_api.h"
#include "runtime/environment.h"
#include "tools/npy.h"

namespace sorun {
namespace cli {
namespace {

std::string Describe(DLDataType dtype, const std::vector<int64_t>& shape) {
  return DTypeToString(dtype) + ShapeToString(shape.data(), static_cast<int>(shape.size()));
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// IEEE half from a float in a small range (round to nearest; no NaN/overflow handling needed here).
uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // flush tiny values to zero
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  if (mant & 0x1000u) ++h;
  return static_cast<uint16_t>(h);
}

}  // namespace

double NowMs() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}

StatusOr<std::vector<InputFile>> ParseInputFlags(const std::vector<std::string>& values) {
  std::vector<InputFile> inputs;
  std::set<std::string> seen;
  for (const std::string& v : values) {
    size_t eq = v.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument("--input '" + v + "': expected NAME=FILE.npy (no '=')");
    }
    InputFile f{v.substr(0, eq), v.substr(eq + 1)};
    if (f.name.empty()) return InvalidArgument("--input '" + v + "': empty input name before '='");
    if (f.path.empty()) return InvalidArgument("--input '" + v + "': empty file name after '='");
    if (!seen.insert(f.name).second) return InvalidArgument("--input: '" + f.name + "' given more than once");
    inputs.push_back(std::move(f));
  }
  return inputs;
}

namespace {

// Every byte of standard input (a model piped in: `curl ... | sorun run - ...`).
StatusOr<std::string> ReadStandardInput() {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(0, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return InvalidArgument(std::string("MODEL '-': cannot read standard input: ") + std::strerror(errno));
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  if (bytes.empty()) return InvalidArgument("MODEL '-': standard input is empty (pipe a packed model into it)");
  return bytes;
}

}  // namespace

StatusOr<std::unique_ptr<ModelSession>> ModelSession::Open(const ModelSource& source, DLDevice device) {
  std::unique_ptr<ModelSession> session(new ModelSession());
  session->source_ = source;
  session->device_ = device;
  SORUN_RETURN_IF_ERROR(Initialize());
  // Every SORUN_* variable is checked before the model is touched (a bad SORUN_NUM_THREADS is an
  // error, exactly like a bad SORUN_VERIFY_CHECKSUM); Initialize() checks only on its first call.
  SORUN_RETURN_IF_ERROR(CheckSorunEnvironment());
  const bool from_stdin = source.model_path == "-";
  if (from_stdin && !source.graph_path.empty()) {
    return InvalidArgument("MODEL '-' (standard input) is a packed model; --graph needs the kernel library's path");
  }
  if (!from_stdin) SORUN_RETURN_IF_ERROR(CheckRegularFile(source.model_path, "model"));
  if (!source.graph_path.empty()) SORUN_RETURN_IF_ERROR(CheckRegularFile(source.graph_path, "graph"));
  if (!source.params_path.empty()) SORUN_RETURN_IF_ERROR(CheckRegularFile(source.params_path, "params"));
  Status present = CheckDeviceExists(device);
  if (!present.ok()) return NamePath(std::move(present), source.model_path);
  // The CLI verifies the blob checksum unless --no-verify (the library's default is not to). The choice
  // is explicit, so it wins over SORUN_VERIFY_CHECKSUM (which only sets the library's default).
  RuntimeOptions options;
  options.verify_checksum = source.verify_checksum;
  options.prefetch = source.prefetch;
  SORUN_RETURN_IF_ERROR(AddLoadHooks(source.protection, &options));
  std::string stdin_bytes;
  if (from_stdin) {
    SORUN_ASSIGN_OR_RETURN(stdin_bytes, ReadStandardInput());
  }
  const StartupTimings cold_before = ReadStartupTimings();
  double t0 = NowMs();
  if (from_stdin) {
    // Loaded from memory (a sealed memfd): nothing is written to disk; errors name "<stdin>".
    auto model = Model::LoadFromMemory(stdin_bytes, options, "<stdin>");
    if (!model.ok()) return std::move(model).status();
    session->model_ = std::move(*model);
    std::string().swap(stdin_bytes);
  } else if (source.graph_path.empty()) {
    auto model = Model::Load(source.model_path, options);
    if (!model.ok()) {
      Status s = NamePath(std::move(model).status(), source.model_path);
      if (s.code() == StatusCode::kFailedPrecondition &&
          s.message().find("not a GraphExecutorFactory") != std::string::npos) {
        // A kernel library: say how the CLI takes the rest of a three-file deployment.
        return FailedPrecondition(s.message() + ": --graph G.json [--params P.params]");
      }
      return s;
    }
    session->model_ = std::move(*model);
  } else {
    // MODEL is the kernel library; the graph and params files are read and checked here too.
    auto model = Model::LoadFromFiles(source.graph_path, source.model_path, source.params_path, options);
    if (!model.ok()) {
      // An error about the params or the graph file starts with that file's path, not the model's.
      Status s = std::move(model).status();
      for (const std::string* file : {&source.params_path, &source.graph_path}) {
        if (!file->empty() && s.message().find(*file) != std::string::npos) return StartWithPath(std::move(s), *file);
      }
      return NamePath(std::move(s), source.model_path);
    }
    session->model_ = std::move(*model);
  }
  double t1 = NowMs();
  session->load_ms_ = t1 - t0;

  ExecutorOptions executor_options;
  executor_options.devices = {device};
  executor_options.cuda_graph = source.cuda_graph;
  auto executor = session->model_->NewExecutor(executor_options);
  if (!executor.ok()) {
    Status s = std::move(executor).status();
    if (!source.graph_path.empty() && s.message().find(source.graph_path) != std::string::npos) {
      return StartWithPath(std::move(s), source.graph_path);
    }
    return NamePath(std::move(s), source.model_path);
  }
  session->executor_ = std::move(*executor);
  const double t2 = NowMs();
  session->create_ms_ = t2 - t1;
  session->cold_start_ = StartupTimingsBetween(cold_before, ReadStartupTimings());
  if (source.warm_executor) {
    Status warmed = session->executor_->Warmup();
    if (!warmed.ok()) return NamePath(std::move(warmed), source.model_path);
    session->warmup_ms_ = NowMs() - t2;
  }
  return session;
}

std::string ModelSession::InputList() const {
  std::string s;
  for (const TensorInfo& t : executor_->inputs()) {
    s += (s.empty() ? "" : ", ") + t.name + " " + Describe(t.dtype, t.shape) + (t.is_param ? " (param)" : "");
  }
  return s.empty() ? "none" : s;
}

Status ModelSession::BindInputs(const std::vector<InputFile>& inputs, bool fill_missing,
                                std::vector<std::string>* filled) {
  std::map<std::string, TensorInfo> by_name;
  for (const TensorInfo& t : executor_->inputs()) by_name[t.name] = t;
  std::set<std::string> bound;
  for (const InputFile& f : inputs) {
    auto it = by_name.find(f.name);
    if (it == by_name.end()) {
      return InvalidArgument("--input " + f.name + "=" + f.path + ": the model has no input named '" + f.name +
                             "' (inputs: " + InputList() + ")");
    }
    const TensorInfo& info = it->second;
    SORUN_RETURN_IF_ERROR(CheckRegularFile(f.path, "input file"));
    auto tensor = ReadNpyFile(f.path);
    if (!tensor.ok()) return NamePath(std::move(tensor).status(), f.path);
    // -1: a dimension the model takes at run time (Relax VM models); no shape: ndim unknown too.
    bool shape_ok = info.shape.empty() || tensor->shape().size() == info.shape.size();
    for (size_t d = 0; shape_ok && d < info.shape.size(); ++d) {
      shape_ok = info.shape[d] < 0 || info.shape[d] == tensor->shape()[d];
    }
    if (tensor->dtype() != info.dtype || !shape_ok) {
      return InvalidArgument(f.path + " holds " + Describe(tensor->dtype(), tensor->shape()) + " but input '" + f.name +
                             "' expects " + Describe(info.dtype, info.shape));
    }
    Status s = executor_->SetInput(f.name, *tensor->dl());
    if (!s.ok()) return std::move(s).Annotate("setting input '" + f.name + "' from " + f.path);
    bound.insert(f.name);
  }
  std::vector<TensorInfo> missing;
  for (const TensorInfo& t : executor_->inputs()) {
    if (!t.is_param && !bound.count(t.name)) missing.push_back(t);
  }
  if (missing.empty()) return Status::Ok();
  if (!fill_missing) {
    std::string names;
    for (const TensorInfo& t : missing)
      names += (names.empty() ? "" : ", ") + t.name + " " + Describe(t.dtype, t.shape);
    return InvalidArgument(source_.model_path + ": graph input" + (missing.size() > 1 ? "s " : " ") + names +
                           (missing.size() > 1 ? " have" : " has") + " no value: give --input " + missing[0].name +
                           "=FILE.npy" + (missing.size() > 1 ? " (and the others)" : ""));
  }
  for (const TensorInfo& t : missing) {
    // A dimension the model takes at run time gets 1 (bench and warm-up inputs only).
    std::vector<int64_t> shape = t.shape;
    for (int64_t& d : shape) d = d < 0 ? 1 : d;
    SORUN_ASSIGN_OR_RETURN(Tensor host, Tensor::Empty(shape, t.dtype, CpuDevice()));
    FillPseudoRandom(host, t.name);
    Status s = executor_->SetInput(t.name, *host.dl());
    if (!s.ok()) return std::move(s).Annotate("setting generated input '" + t.name + "'");
    if (filled) filled->push_back(t.name);
  }
  return Status::Ok();
}

Status ModelSession::Sync() { return executor_->Synchronize(); }

Status ModelSession::Run() {
  Status s = executor_->Run();
  if (!s.ok()) return NamePath(std::move(s), source_.model_path);
  return Sync();
}

StatusOr<Tensor> ModelSession::OutputOnHost(int index) {
  // The last run's shape and dtype: the output array's own (a Relax model's may change per run).
  SORUN_ASSIGN_OR_RETURN(NDArray output, executor_->GetOutput(index));
  SORUN_ASSIGN_OR_RETURN(Tensor host, Tensor::Empty(output.shape(), output.dtype(), CpuDevice()));
  SORUN_RETURN_IF_ERROR(executor_->CopyOutputTo(index, *host.dl()));
  return host;
}

std::string ModelSession::OutputName(int index) const {
  const std::vector<TensorInfo>& described = executor_->outputs();
  return index >= 0 && static_cast<size_t>(index) < described.size() ? described[static_cast<size_t>(index)].name
                                                                     : "output_" + std::to_string(index);
}

void FillPseudoRandom(const Tensor& tensor, const std::string& seed_name) {
  uint64_t state = 0x5EED5EED12345678ull;
  for (unsigned char c : seed_name) state = (state ^ c) * 0x100000001B3ull;
  const DLDataType t = tensor.dtype();
  // Scalars are counted from the tensor's byte size (DTypeScalarStride), never elements * lanes:
  // sub-byte vector lanes (int1x8) share bytes.
  const size_t stride = DTypeScalarStride(t);
  const int64_t n = stride == 0 ? 0 : static_cast<int64_t>(tensor.nbytes() / stride);
  char* base = tensor.data_as<char>();
  if (stride == 0) {
    std::memset(base, 0, static_cast<size_t>(tensor.nbytes()));  // packed sub-byte lanes: zeros
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = SplitMix64(&state);
    double unit = static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
    double f = unit * 2.0 - 1.0;
    int64_t k = static_cast<int64_t>(r % 10);
    if (t.code == kDLFloat && t.bits == 32) {
      reinterpret_cast<float*>(base)[i] = static_cast<float>(f);
    } else if (t.code == kDLFloat && t.bits == 64) {
      reinterpret_cast<double*>(base)[i] = f;
    } else if (t.code == kDLFloat && t.bits == 16) {
      reinterpret_cast<uint16_t*>(base)[i] = FloatToHalf(static_cast<float>(f));
    } else if (t.code == kDLBfloat && t.bits == 16) {
      float ff = static_cast<float>(f);
      uint32_t x;
      std::memcpy(&x, &ff, 4);
      reinterpret_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(x >> 16);
    } else if ((t.code == kDLInt || t.code == kDLUInt) && t.bits == 1) {
      reinterpret_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(k & 1);
    } else if ((t.code == kDLInt || t.code == kDLUInt) &&
               (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) {
      std::memset(base + i * (t.bits / 8), 0, t.bits / 8);
      std::memcpy(base + i * (t.bits / 8), &k, 1);  // little-endian: value in the low byte
    } else {
      // Other dtypes: zeros (their element size per DTypeBytes).
      std::memset(base, 0, static_cast<size_t>(tensor.nbytes()));
      return;
    }
  }
}

std::string FormatLeadingValues(const Tensor& tensor, int max_values) {
  const DLDataType t = tensor.dtype();
  const size_t stride = DTypeScalarStride(t);  // as in FillPseudoRandom: bounded by the byte size
  if (stride == 0) return "(" + DTypeToString(t) + " values not shown)";
  const int64_t n = static_cast<int64_t>(tensor.nbytes() / stride);
  const char* base = tensor.data_as<const char>();
  std::string s = "[";
  char buf[64];
  int64_t shown = std::min<int64_t>(n, max_values);
  for (int64_t i = 0; i < shown; ++i) {
    if (t.code == kDLFloat && t.bits == 32) {
      std::snprintf(buf, sizeof(buf), "%.6g", reinterpret_cast<const float*>(base)[i]);
    } else if (t.code == kDLFloat && t.bits == 64) {
      std::snprintf(buf, sizeof(buf), "%.6g", reinterpret_cast<const double*>(base)[i]);
    } else if (t.code == kDLFloat && t.bits == 16) {
      std::snprintf(buf, sizeof(buf), "%.4g", HalfToFloat(reinterpret_cast<const uint16_t*>(base)[i]));
    } else if (t.code == kDLBfloat && t.bits == 16) {
      uint32_t x = static_cast<uint32_t>(reinterpret_cast<const uint16_t*>(base)[i]) << 16;
      float f;
      std::memcpy(&f, &x, 4);
      std::snprintf(buf, sizeof(buf), "%.4g", f);
    } else if ((t.code == kDLInt || t.code == kDLUInt) && t.bits == 1) {
      std::snprintf(buf, sizeof(buf), "%s", base[i] ? "true" : "false");
    } else if (t.code == kDLInt && t.bits == 8) {
      std::snprintf(buf, sizeof(buf), "%d", reinterpret_cast<const int8_t*>(base)[i]);
    } else if (t.code == kDLInt && t.bits == 16) {
      std::snprintf(buf, sizeof(buf), "%d", reinterpret_cast<const int16_t*>(base)[i]);
    } else if (t.code == kDLInt && t.bits == 32) {
      std::snprintf(buf, sizeof(buf), "%d", reinterpret_cast<const int32_t*>(base)[i]);
    } else if (t.code == kDLInt && t.bits == 64) {
      std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(reinterpret_cast<const int64_t*>(base)[i]));
    } else if (t.code == kDLUInt && t.bits == 8) {
      std::snprintf(buf, sizeof(buf), "%u", reinterpret_cast<const uint8_t*>(base)[i]);
    } else if (t.code == kDLUInt && t.bits == 16) {
      std::snprintf(buf, sizeof(buf), "%u", reinterpret_cast<const uint16_t*>(base)[i]);
    } else if (t.code == kDLUInt && t.bits == 32) {
      std::snprintf(buf, sizeof(buf), "%u", reinterpret_cast<const uint32_t*>(base)[i]);
    } else if (t.code == kDLUInt && t.bits == 64) {
      std::snprintf(buf, sizeof(buf), "%llu",
                    static_cast<unsigned long long>(reinterpret_cast<const uint64_t*>(base)[i]));
    } else {
      return "(" + DTypeToString(t) + " values not shown)";
    }
    s += (i ? ", " : "") + std::string(buf);
  }
  if (n > shown) s += ", ...";
  s += "]";
  if (n > shown) s += " (" + std::to_string(n) + " values)";
  return s;
}

}  // namespace cli
}  // namespace sorun
