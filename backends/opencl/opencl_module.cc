#include "backends/opencl/opencl_module.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "backends/opencl/opencl_status.h"
#include "runtime/data_type.h"
#include "runtime/registry_keys.h"

namespace sorun {
namespace {

constexpr char kDelimiter[] = "// Function: ";
constexpr size_t kMaxBuildLogBytes = 16 * 1024;

// Source of unique module ids and the count of module deaths (which tells threads to drop kernels
// of dead modules). Constant-initialised.
std::atomic<uint64_t> g_next_module_id{1};
std::atomic<uint64_t> g_dead_module_epoch{0};

// The calling thread's cl_kernel objects, per module and (device, kernel). Owns the kernels.
class ThreadKernelTable {
 public:
  ThreadKernelTable() = default;
  ThreadKernelTable(const ThreadKernelTable&) = delete;
  ThreadKernelTable& operator=(const ThreadKernelTable&) = delete;
  ~ThreadKernelTable() {
    for (auto& kv : modules_) Release(kv.second);
  }

  static ThreadKernelTable& ForThisThread() {
    thread_local ThreadKernelTable table;
    return table;
  }

  // The slot for kernel `index` of module `id`, which has `count` slots (null until filled).
  cl_kernel* Slot(uint64_t id, const std::shared_ptr<const int>& alive, size_t count, size_t index) {
    uint64_t epoch = g_dead_module_epoch.load(std::memory_order_acquire);
    if (epoch != seen_epoch_) {
      seen_epoch_ = epoch;
      for (auto it = modules_.begin(); it != modules_.end();) {
        if (it->second.alive.expired()) {
          Release(it->second);
          it = modules_.erase(it);
        } else {
          ++it;
        }
      }
    }
    Entry& entry = modules_[id];
    if (entry.kernels.empty()) {
      entry.alive = alive;
      entry.kernels.assign(count, nullptr);
    }
    return &entry.kernels[index];
  }

 private:
  struct Entry {
    std::weak_ptr<const int> alive;
    std::vector<cl_kernel> kernels;
  };
  static void Release(Entry& entry) {
    for (cl_kernel k : entry.kernels) {
      if (k != nullptr) clReleaseKernel(k);
    }
    entry.kernels.clear();
  }

  std::unordered_map<uint64_t, Entry> modules_;
  uint64_t seen_epoch_ = 0;
};

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// Positions of delimiter lines (at the start of the source or right after a newline).
std::vector<size_t> FindDelimiters(std::string_view source) {
  std::vector<size_t> at;
  size_t pos = 0;
  while ((pos = source.find(kDelimiter, pos)) != std::string_view::npos) {
    if (pos == 0 || source[pos - 1] == '\n') at.push_back(pos);
    pos += sizeof(kDelimiter) - 1;
  }
  return at;
}

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return "(no build log)";
  }
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr) != CL_SUCCESS) {
    return "(no build log)";
  }
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  if (log.empty()) return "(empty build log)";
  if (log.size() > kMaxBuildLogBytes) {
    log.resize(kMaxBuildLogBytes);
    log += "\n... (build log truncated)";
  }
  return log;
}

// The device binary of a built single-device program; empty when the driver offers none.
std::string ProgramBinary(cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr) != CL_SUCCESS || size == 0) {
    return "";
  }
  std::string binary(size, '\0');
  unsigned char* ptr = reinterpret_cast<unsigned char*>(&binary[0]);
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS) return "";
  return binary;
}

std::string WorkSizes(const size_t* sizes, cl_uint n) {
  std::string s = "[";
  for (cl_uint i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace

StatusOr<std::vector<OpenclSourcePiece>> SplitOpenclSource(std::string_view source) {
  std::vector<OpenclSourcePiece> pieces;
  std::vector<size_t> at = FindDelimiters(source);
  if (at.empty()) {
    pieces.push_back(OpenclSourcePiece{"", std::string(source)});
    return pieces;
  }
  std::string_view preamble = source.substr(0, at[0]);
  if (IsBlank(preamble)) preamble = {};
  for (size_t i = 0; i < at.size(); ++i) {
    size_t name_begin = at[i] + sizeof(kDelimiter) - 1;
    size_t line_end = source.find('\n', name_begin);
    size_t body_begin = line_end == std::string_view::npos ? source.size() : line_end + 1;
    size_t body_end = i + 1 < at.size() ? at[i + 1] : source.size();
    std::string_view name =
        source.substr(name_begin, (line_end == std::string_view::npos ? source.size() : line_end) - name_begin);
    while (!name.empty() && (name.back() == '\r' || name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
    if (name.empty()) {
      return DataLoss("OpenCL source: the '// Function:' line at byte " + std::to_string(at[i]) + " names no kernel");
    }
    for (const OpenclSourcePiece& p : pieces) {
      if (p.kernel == name) {
        return DataLoss("OpenCL source: kernel '" + std::string(name) + "' has two '// Function:' pieces");
      }
    }
    std::string text(preamble);
    text.append(source.substr(body_begin, body_end - body_begin));
    pieces.push_back(OpenclSourcePiece{std::string(name), std::move(text)});
  }
  return pieces;
}

StatusOr<OpenclPayloadPlan> PlanOpenclPayload(const DeviceModulePayload& payload) {
  const std::string& fmt = payload.fmt;
  if (fmt == "xclbin" || fmt == "awsxclbin" || fmt == "aocx") {
    return Unimplemented("opencl module: fmt '" + fmt +
                         "' is an FPGA binary (Xilinx/Intel FPGA flavour), which sorun's OpenCL backend does not "
                         "load; only 'cl' source is supported");
  }
  if (fmt != "cl") {
    return DataLoss("opencl module: unknown fmt '" + fmt + "' (expected 'cl', or an FPGA binary format)");
  }
  if (IsBlank(payload.data)) return DataLoss("opencl module: the OpenCL source is empty");

  OpenclPayloadPlan plan;
  SORUN_ASSIGN_OR_RETURN(plan.pieces, SplitOpenclSource(payload.data));
  plan.split = !plan.pieces[0].kernel.empty();
  if (plan.split) {  // pieces are unique (SplitOpenclSource), kernels too (below): one piece per kernel
    const std::string counts = "the source has " + std::to_string(plan.pieces.size()) +
                               " kernel pieces ('// Function:' lines) and the function map lists " +
                               std::to_string(payload.functions.size()) + " kernels";
    for (const auto& entry : payload.functions) {
      const std::string& name = entry.first;
      const bool has_piece = std::any_of(plan.pieces.begin(), plan.pieces.end(),
                                         [&](const OpenclSourcePiece& p) { return p.kernel == name; });
      if (!has_piece) {
        return DataLoss("opencl module: " + counts + ": kernel '" + name +
                        "' of the function map has no '// Function: " + name + "' piece in the source");
      }
    }
    for (const OpenclSourcePiece& piece : plan.pieces) {
      if (payload.Find(piece.kernel) == nullptr) {
        return DataLoss("opencl module: " + counts + ": the '// Function: " + piece.kernel + "' piece has no kernel '" +
                        piece.kernel + "' in the function map");
      }
    }
  }
  for (size_t k = 0; k < payload.functions.size(); ++k) {
    const std::string& name = payload.functions[k].first;
    const auto& info = payload.functions[k].second;
    for (size_t j = 0; j < k; ++j) {
      if (payload.functions[j].first == name) return DataLoss("opencl module: kernel '" + name + "' listed twice");
    }
    OpenclPayloadPlan::Kernel kernel;
    SORUN_ASSIGN_OR_RETURN(kernel.config, LaunchConfig::FromFunctionInfo(name, info));
    for (size_t i = 0; i < info.arg_types.size(); ++i) {
      auto bytes = KernelArgBytes(info.arg_types[i]);
      if (!bytes.ok()) {
        return std::move(bytes).status().Annotate("opencl module: kernel '" + name + "' argument " + std::to_string(i));
      }
      kernel.arg_bytes.push_back(*bytes);
    }
    if (plan.split) {  // found: checked above
      auto it = std::find_if(plan.pieces.begin(), plan.pieces.end(),
                             [&](const OpenclSourcePiece& p) { return p.kernel == name; });
      kernel.program = static_cast<size_t>(it - plan.pieces.begin());
    }
    plan.kernels.push_back(std::move(kernel));
  }
  return plan;
}

StatusOr<ObjectPtr<OpenclModuleNode>> OpenclModuleNode::Create(DeviceModulePayload payload,
                                                               OpenclModuleOptions options) {
  SORUN_ASSIGN_OR_RETURN(OpenclPayloadPlan plan, PlanOpenclPayload(payload));
  ObjectPtr<OpenclModuleNode> node(ObjectPtr<OpenclModuleNode>::FromRaw(new OpenclModuleNode()));
  for (OpenclSourcePiece& piece : plan.pieces) {
    Program program;
    program.label = plan.split ? "the program of kernel '" + piece.kernel + "'"
                               : "the whole-source program (" + std::to_string(payload.functions.size()) + " kernels)";
    program.source = std::move(piece.source);
    node->programs_.push_back(std::move(program));
  }
  node->payload_ = std::move(payload);
  for (size_t k = 0; k < node->payload_.functions.size(); ++k) {
    Kernel kernel;
    kernel.name = node->payload_.functions[k].first;
    kernel.info = &node->payload_.functions[k].second;
    kernel.config = std::move(plan.kernels[k].config);
    kernel.arg_bytes = std::move(plan.kernels[k].arg_bytes);
    kernel.program = plan.kernels[k].program;
    node->kernels_.push_back(std::move(kernel));
  }

  node->build_options_ = std::move(options.build_options);
  if (!options.disable_program_cache) {
    node->cache_ = options.program_cache ? std::move(options.program_cache) : ProgramCache::Default();
    if (!node->cache_->enabled()) node->cache_.reset();
  }
  node->devices_ = options.devices ? options.devices : &OpenclDevices::Global();
  node->device_count_ = node->devices_->DeviceCount();
  const size_t num_slots = static_cast<size_t>(node->device_count_) * node->programs_.size();
  node->slots_.reserve(num_slots);
  for (size_t i = 0; i < num_slots; ++i) node->slots_.push_back(std::make_unique<ProgramSlot>());
  node->id_ = g_next_module_id.fetch_add(1, std::memory_order_relaxed);
  node->alive_ = std::make_shared<const int>(0);
  return node;
}

OpenclModuleNode::~OpenclModuleNode() {
  alive_.reset();
  g_dead_module_epoch.fetch_add(1, std::memory_order_acq_rel);
  // Kernels other threads still hold keep their program alive until released (OpenCL semantics).
  for (auto& slot : slots_) {
    if (slot->program != nullptr) clReleaseProgram(slot->program);
  }
}

const char* OpenclModuleNode::type_key() const { return keys::kTypeKeyOpenCL; }

PackedFunc OpenclModuleNode::GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) {
  auto it = std::find_if(kernels_.begin(), kernels_.end(), [&](const Kernel& k) { return k.name == name; });
  if (it == kernels_.end()) return PackedFunc();
  const size_t index = static_cast<size_t>(it - kernels_.begin());
  ObjectPtr<OpenclModuleNode> keep = ObjectPtr<OpenclModuleNode>::FromRaw(this);
  return PackedFunc::FromBody(std::string(name), [keep, index](PackedArgs args, Value* ret) -> Status {
    return keep->LaunchKernel(index, args);
  });
}

Status OpenclModuleNode::SaveToBinary(BinaryWriter* writer) const {
  WriteDeviceModulePayload(payload_, writer);
  return Status::Ok();
}

std::vector<std::string> OpenclModuleNode::ListFunctionNames() const {
  std::vector<std::string> names;
  for (const Kernel& k : kernels_) names.push_back(k.name);
  return names;
}

Status OpenclModuleNode::BuildPrograms(int device_id) {
  for (size_t p = 0; p < programs_.size(); ++p) {
    SORUN_RETURN_IF_ERROR_CTX(GetProgram(p, device_id).status(), "opencl module");
  }
  return Status::Ok();
}

StatusOr<cl_program> OpenclModuleNode::GetProgram(size_t program, int device_id) {
  SORUN_RETURN_IF_ERROR(CheckDevice(device_id));
  ProgramSlot& slot = *slots_[static_cast<size_t>(device_id) * programs_.size() + program];
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.program == nullptr) {
    SORUN_ASSIGN_OR_RETURN(slot.program, BuildProgram(programs_[program], device_id));
  }
  return slot.program;
}

StatusOr<cl_program> OpenclModuleNode::BuildProgram(const Program& program, int device_id) {
  SORUN_ASSIGN_OR_RETURN(const OpenclDeviceInfo* info, devices_->Info(device_id));
  SORUN_ASSIGN_OR_RETURN(OpenclQueue q, devices_->Queue(device_id));
  const std::string where =
      "building " + program.label + " on opencl:" + std::to_string(device_id) + " (" + info->name + ")";
  const ProgramCacheKey key{program.source,       info->name,          info->version,
                            info->driver_version, info->platform_name, info->platform_version,
                            build_options_};
  cl_int err = CL_SUCCESS;
  if (cache_) {
    std::string binary;
    if (cache_->Lookup(key, &binary) == ProgramCache::LookupResult::kHit) {
      const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary.data());
      const size_t size = binary.size();
      cl_int binary_status = CL_SUCCESS;
      cl_program p = clCreateProgramWithBinary(q.context, 1, &info->device, &size, &bytes, &binary_status, &err);
      if (err == CL_SUCCESS && binary_status == CL_SUCCESS && p != nullptr) {
        err = clBuildProgram(p, 1, &info->device, build_options_.c_str(), nullptr, nullptr);
        if (err == CL_SUCCESS) return p;
      }
      if (p != nullptr) clReleaseProgram(p);
      cache_->RecordRejected();  // fall back to the source and overwrite the entry
    }
  }
  const char* text = program.source.data();
  const size_t length = program.source.size();
  cl_program p = clCreateProgramWithSource(q.context, 1, &text, &length, &err);
  if (err != CL_SUCCESS || p == nullptr) {
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_INVALID_PROGRAM, "clCreateProgramWithSource", where);
  }
  err = clBuildProgram(p, 1, &info->device, build_options_.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    std::string log = BuildLog(p, info->device);
    clReleaseProgram(p);
    Status status = opencl::ClStatus(err, "clBuildProgram", where);
    return Status(status.code(), status.message() + "\nbuild log:\n" + log);
  }
  if (cache_) {
    std::string binary = ProgramBinary(p);
    if (!binary.empty()) cache_->Store(key, binary);
  }
  return p;
}

Status OpenclModuleNode::CheckDevice(int device_id) const {
  if (device_id >= 0 && device_id < device_count_) return Status::Ok();
  // Discovery runs once, so the device table cannot have grown since Create(): this names the
  // missing device and how many exist.
  SORUN_RETURN_IF_ERROR(devices_->Info(device_id).status());
  return Internal("opencl:" + std::to_string(device_id) + " is not among the module's " +
                  std::to_string(device_count_) + " devices");
}

StatusOr<cl_kernel> OpenclModuleNode::GetKernel(size_t index, int device_id) {
  SORUN_RETURN_IF_ERROR(CheckDevice(device_id));
  cl_kernel* slot =
      ThreadKernelTable::ForThisThread().Slot(id_, alive_, kernels_.size() * static_cast<size_t>(device_count_),
                                              static_cast<size_t>(device_id) * kernels_.size() + index);
  if (*slot != nullptr) return *slot;
  const Kernel& k = kernels_[index];
  SORUN_ASSIGN_OR_RETURN(cl_program program, GetProgram(k.program, device_id));
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, k.name.c_str(), &err);
  if (err == CL_INVALID_KERNEL_NAME) {
    return DataLoss(programs_[k.program].label + " defines no __kernel named '" + k.name + "'");
  }
  if (err != CL_SUCCESS || kernel == nullptr) {
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_INVALID_KERNEL, "clCreateKernel");
  }
  cl_uint num_args = 0;
  err = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(num_args), &num_args, nullptr);
  if (err == CL_SUCCESS && num_args != k.info->arg_types.size()) {
    clReleaseKernel(kernel);
    return DataLoss("the OpenCL source declares " + std::to_string(num_args) +
                    " parameters but the function map lists " + std::to_string(k.info->arg_types.size()));
  }
  *slot = kernel;
  return kernel;
}

Status OpenclModuleNode::LaunchKernel(size_t index, PackedArgs args) {
  const Kernel& k = kernels_[index];
  const std::string where = "opencl kernel '" + k.name + "'";
  if (k.config.use_dyn_shared_memory) {
    return Unimplemented(where +
                         " uses dynamic shared memory (tir.use_dyn_shared_memory), which the OpenCL backend "
                         "does not support");
  }
  SORUN_ASSIGN_OR_RETURN(LaunchDims dims,
                         ExtractLaunchDims(k.name, k.config, args.values(), args.codes(), args.size()));
  const int device_id = OpenclDevices::CurrentDevice();
  auto queue = devices_->Queue(device_id);
  if (!queue.ok()) return std::move(queue).status().Annotate(where);
  auto found = GetKernel(index, device_id);
  if (!found.ok()) return std::move(found).status().Annotate(where);
  cl_kernel kernel = *found;

  for (int i = 0; i < k.config.num_kernel_args; ++i) {
    const DLDataType type = k.info->arg_types[i];
    const size_t bytes = k.arg_bytes[i];
    const int code = args.code(i);
    const TVMValue& v = args.value(i);
    auto type_error = [&](const char* expected) {
      return InvalidArgument(where + " argument " + std::to_string(i) + " (" + DTypeToString(type) + "): expected " +
                             expected + ", got " + TypeCodeName(code));
    };
    union {
      cl_mem mem;
      int8_t i8;
      int16_t i16;
      int32_t i32;
      int64_t i64;
      float f32;
      double f64;
    } holder;
    if (type.code == kDTypeHandle) {
      if (code == kTVMOpaqueHandle) {
        holder.mem = static_cast<cl_mem>(v.v_handle);
      } else if (code == kTVMNullptr) {
        holder.mem = nullptr;
      } else if ((code == kTVMDLTensorHandle || code == kTVMNDArrayHandle) && v.v_handle != nullptr) {
        const DLTensor* t = static_cast<const DLTensor*>(v.v_handle);
        if (t->device.device_type != kDLOpenCL) {
          return InvalidArgument(where + " argument " + std::to_string(i) + ": tensor " + DescribeDLTensor(*t) +
                                 " is not on an OpenCL device");
        }
        if (t->byte_offset != 0) {
          return InvalidArgument(where + " argument " + std::to_string(i) + ": tensor " + DescribeDLTensor(*t) +
                                 " has byte_offset " + std::to_string(t->byte_offset) +
                                 "; OpenCL buffers are passed whole (byte_offset must be 0)");
        }
        holder.mem = static_cast<cl_mem>(t->data);
      } else {
        return type_error("a buffer handle (cl_mem)");
      }
    } else if (type.code == kDLFloat) {
      double d = 0;
      if (code == kTVMArgFloat) {
        d = v.v_float64;
      } else if (code == kTVMArgInt || code == kTVMArgBool) {
        d = static_cast<double>(v.v_int64);
      } else {
        return type_error("a float");
      }
      if (bytes == 4) {
        holder.f32 = static_cast<float>(d);
      } else {
        holder.f64 = d;
      }
    } else {
      if (code != kTVMArgInt && code != kTVMArgBool) return type_error("an int");
      switch (bytes) {
        case 1: holder.i8 = static_cast<int8_t>(v.v_int64); break;
        case 2: holder.i16 = static_cast<int16_t>(v.v_int64); break;
        case 4: holder.i32 = static_cast<int32_t>(v.v_int64); break;
        default: holder.i64 = v.v_int64; break;
      }
    }
    SORUN_RETURN_IF_ERROR(opencl::ClStatus(clSetKernelArg(kernel, static_cast<cl_uint>(i), bytes, &holder),
                                           "clSetKernelArg(" + std::to_string(i) + ")", where));
  }

  const cl_uint work_dim = static_cast<cl_uint>(k.config.work_dim);
  size_t global[3] = {1, 1, 1};
  size_t local[3] = {1, 1, 1};
  for (cl_uint d = 0; d < work_dim; ++d) {
    if (static_cast<uint64_t>(dims.grid[d]) > SIZE_MAX / static_cast<uint64_t>(dims.block[d])) {
      return InvalidArgument(where + ": global work size " + std::to_string(dims.grid[d]) + " x " +
                             std::to_string(dims.block[d]) + " in dimension " + std::to_string(d) + " overflows");
    }
    global[d] = static_cast<size_t>(dims.grid[d]) * static_cast<size_t>(dims.block[d]);
    local[d] = static_cast<size_t>(dims.block[d]);
  }
  cl_int err = clEnqueueNDRangeKernel(queue->queue, kernel, work_dim, nullptr, global, local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) {
    Status status = opencl::ClStatus(err, "clEnqueueNDRangeKernel", where + " on opencl:" + std::to_string(device_id));
    return Status(status.code(), status.message() + " (global " + WorkSizes(global, work_dim) + ", local " +
                                     WorkSizes(local, work_dim) + ")");
  }
  return Status::Ok();
}

StatusOr<Module> CreateOpenclModule(DeviceModulePayload payload) {
  return CreateOpenclModule(std::move(payload), OpenclModuleOptions());
}

StatusOr<Module> CreateOpenclModule(DeviceModulePayload payload, OpenclModuleOptions options) {
  SORUN_ASSIGN_OR_RETURN(ObjectPtr<OpenclModuleNode> node,
                         OpenclModuleNode::Create(std::move(payload), std::move(options)));
  return Module(ObjectPtr<ModuleNode>(std::move(node)));
}

StatusOr<Module> LoadOpenclModuleFromBinary(BinaryReader& reader, PayloadGrammar grammar) {
  DeviceModulePayload payload;
  SORUN_RETURN_IF_ERROR(ReadDeviceModulePayload(reader, keys::kTypeKeyOpenCL, &payload, grammar));
  return CreateOpenclModule(std::move(payload));
}

}  // namespace sorun
