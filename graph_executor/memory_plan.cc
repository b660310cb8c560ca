#include "graph_executor/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "runtime/data_type.h"
#include "runtime/texture_layout.h"

namespace sorun {

std::string FormatBytes(uint64_t bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  } else if (bytes < (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / 1073741824.0);
  }
  return buf;
}

uint64_t MemoryPlan::total_activation_bytes() const {
  uint64_t n = 0;
  for (const auto& d : devices) n += d.activation_bytes;
  return n;
}

uint64_t MemoryPlan::total_weight_bytes() const {
  uint64_t n = 0;
  for (const auto& d : devices) n += d.weight_bytes;
  return n;
}

std::string MemoryPlan::Describe() const {
  std::string s;
  for (const auto& d : devices) {
    s += DeviceToString(d.device) + ": weights " + FormatBytes(d.weight_bytes) + ", activations " +
         FormatBytes(d.activation_bytes) + ", workspace " + FormatBytes(d.workspace_bytes) + "\n";
  }
  return s;
}

namespace {

// Grows texture storage `pool` to hold entry `eid` of texture scope `scope` (TVM's 2-d pool sizing:
// the largest width and the largest height of its entries).
Status PlanTexture(const GraphSpec& graph, uint32_t eid, const std::string& scope, StoragePool* pool) {
  const std::vector<int64_t>& shape = graph.shape[eid];
  const DLDataType dtype = graph.dltype[eid];
  const std::string what = "graph entry " + std::to_string(eid) + " (storage " + std::to_string(pool->storage_id) +
                           ", storage_scope '" + scope + "')";
  if (pool->device.device_type != kDLOpenCL) {
    return InvalidArgument(what + " is texture memory, which only OpenCL devices have; it is planned on " +
                           DeviceToString(pool->device));
  }
  auto texture = TextureShapeFor(scope, shape.data(), static_cast<int>(shape.size()));
  if (!texture.ok()) return std::move(texture).status().Annotate(what);
  if (texture->channels != 4) {
    return InvalidArgument(what + ": the last dimension is " + std::to_string(texture->channels) +
                           "; an RGBA image holds 4 values per texel");
  }
  if (pool->texture_scope.empty()) {
    pool->texture_scope = scope;
    pool->texture_dtype = dtype;
  } else if (!(pool->texture_dtype == dtype)) {
    return InvalidArgument(what + " has dtype " + DTypeToString(dtype) + " but the storage's image holds " +
                           DTypeToString(pool->texture_dtype));
  }
  pool->texture_width = std::max(pool->texture_width, texture->width);
  pool->texture_height = std::max(pool->texture_height, texture->height);
  const uint64_t texel_bytes = 4 * ((dtype.bits + 7) / 8);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(pool->texture_width), static_cast<uint64_t>(pool->texture_height),
                             &bytes) ||
      __builtin_mul_overflow(bytes, texel_bytes, &bytes)) {
    return InvalidArgument(what + ": the storage's image of " + std::to_string(pool->texture_width) + " x " +
                           std::to_string(pool->texture_height) + " texels is too large");
  }
  pool->bytes = bytes;
  return Status::Ok();
}

}  // namespace

StatusOr<MemoryPlan> PlanMemory(const GraphSpec& graph, const std::vector<DLDevice>& devices,
                                const std::vector<bool>& bound_param_entries) {
  if (devices.empty()) return InvalidArgument("an executor needs at least one device");
  const uint32_t n = graph.num_entries();
  MemoryPlan plan;
  plan.entry_pool.assign(n, -1);
  plan.entry_device.assign(n, devices[0]);
  for (const DLDevice& d : devices) {
    bool seen = false;
    for (const auto& m : plan.devices) seen = seen || (m.device == d);
    if (!seen) plan.devices.push_back(DeviceMemory{d, 0, 0, 0});
  }
  auto device_for_type = [&](int type, uint32_t eid) -> StatusOr<DLDevice> {
    for (const DLDevice& d : devices) {
      if (d.device_type == type) return d;
    }
    // The host is always there: a heterogeneous graph may keep entries on the CPU even when the
    // caller only named the accelerator.
    if (type == kDLCPU) {
      bool listed = false;
      for (const auto& m : plan.devices) listed = listed || m.device == CpuDevice();
      if (!listed) plan.devices.push_back(DeviceMemory{CpuDevice(), 0, 0, 0});
      return CpuDevice();
    }
    std::string have;
    for (const DLDevice& d : devices) have += (have.empty() ? "" : ", ") + DeviceToString(d);
    return InvalidArgument("graph entry " + std::to_string(eid) + " must live on a " + DescribeDeviceType(type) +
                           " device but the executor was created with " + have);
  };

  std::map<int64_t, size_t> pool_of_sid;
  for (uint32_t eid = 0; eid < n; ++eid) {
    DLDevice dev = devices[0];
    if (!graph.device_index.empty()) {
      SORUN_ASSIGN_OR_RETURN(dev, device_for_type(graph.device_index[eid], eid));
    }
    plan.entry_device[eid] = dev;
    int64_t sid = graph.storage_id[eid];
    auto it = pool_of_sid.find(sid);
    if (it == pool_of_sid.end()) {
      it = pool_of_sid.emplace(sid, plan.pools.size()).first;
      StoragePool pool;
      pool.storage_id = sid;
      pool.device = dev;
      pool.weights_only = true;
      plan.pools.push_back(pool);
    }
    StoragePool& pool = plan.pools[it->second];
    if (pool.device != dev) {
      return InvalidArgument("storage " + std::to_string(sid) + " is used on " + DeviceToString(pool.device) +
                             " and on " + DeviceToString(dev) + " (entry " + std::to_string(eid) + ")");
    }
    // References, not copies: this loop runs once per graph entry at every executor creation.
    static const std::string* const kNoScope = new std::string();
    const std::string& scope = graph.storage_scope.empty() ? *kNoScope : graph.storage_scope[eid];
    const bool is_texture = !scope.empty() && IsTextureScope(scope);
    if (!scope.empty() && !is_texture && scope != "global") {
      return InvalidArgument("graph entry " + std::to_string(eid) + ": storage_scope '" + scope +
                             "' is not supported (sorun allocates \"\", \"global\" and \"global.texture*\" storage)");
    }
    const std::string& texture_scope = is_texture ? scope : *kNoScope;
    if (!pool.entries.empty() && texture_scope != pool.texture_scope) {
      return InvalidArgument("storage " + std::to_string(sid) + " holds entries of storage_scope '" +
                             pool.texture_scope + "' and '" + texture_scope + "' (entry " + std::to_string(eid) + ")");
    }
    if (!texture_scope.empty()) {
      SORUN_RETURN_IF_ERROR(PlanTexture(graph, eid, texture_scope, &pool));
    } else {
      uint64_t bytes = graph.EntryBytes(eid);
      if (bytes > pool.bytes) pool.bytes = bytes;
    }
    pool.entries.push_back(eid);
    if (eid >= bound_param_entries.size() || !bound_param_entries[eid] || !texture_scope.empty()) {
      pool.weights_only = false;
    }
    plan.entry_pool[eid] = static_cast<int32_t>(it->second);
  }
  for (const StoragePool& pool : plan.pools) {
    for (auto& d : plan.devices) {
      if (d.device != pool.device) continue;
      if (pool.weights_only) {
        d.weight_bytes += pool.bytes;
      } else {
        d.activation_bytes += pool.bytes;
      }
    }
  }
  return plan;
}

}  // namespace sorun
