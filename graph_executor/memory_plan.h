// MemoryPlan: where every graph entry lives, decided before anything is allocated (docs/format.md
// section 6.2, TVM's SetupStorage).
//
// One storage pool per storage_id, on the device its entries ask for (device_index, else the first
// executor device), sized for the largest entry using it; entries are views of their pool. Pools whose
// only entries are parameters supplied by the factory are not allocated: those entries point at the
// shared, read-only weights. The plan reports bytes per device (weights, activations) so callers see
// memory use before the first run. Storage whose entries have a "global.texture*" storage_scope
// (TVM's texture-targeted OpenCL builds, e.g. -device=adreno) is an RGBA image2d instead of a buffer:
// as wide and as high as the largest entry's TextureShapeFor(scope, shape) (TVM's 2-d pool sizing),
// on an OpenCL device, never bound to shared weights (kernels read images, so bound parameters are
// copied in). Pure data; thread-compatible.
#ifndef SORUN_GRAPH_EXECUTOR_MEMORY_PLAN_H_
#define SORUN_GRAPH_EXECUTOR_MEMORY_PLAN_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/executor_types.h"
#include "base/status.h"
#include "graph_executor/graph_json.h"

namespace sorun {

struct StoragePool {
  int64_t storage_id = 0;
  DLDevice device{kDLCPU, 0};
  uint64_t bytes = 0;
  std::vector<uint32_t> entries;
  // True when every entry of the pool is a bound parameter: nothing is allocated.
  bool weights_only = false;
  // Texture storage: the entries' "global.texture*" scope (empty for a plain buffer of `bytes`) and
  // the image, texture_width x texture_height RGBA texels of texture_dtype (`bytes` = its size).
  std::string texture_scope;
  int64_t texture_width = 0;
  int64_t texture_height = 0;
  DLDataType texture_dtype{0, 0, 0};
};

struct MemoryPlan {
  std::vector<StoragePool> pools;
  std::vector<int32_t> entry_pool;  // entry id -> index into pools
  std::vector<DLDevice> entry_device;
  std::vector<DeviceMemory> devices;

  uint64_t total_activation_bytes() const;
  uint64_t total_weight_bytes() const;
  // One line per device: "cpu:0 weights 1.2 MiB, activations 300.0 KiB, workspace 0 B".
  std::string Describe() const;
};

// Plans storage for `graph` on `devices` (first = default; cpu:0 is added when device_index asks for
// the CPU and the list has none). `bound_param_entries[e]` is true when
// entry e is a parameter the executor will bind to shared weights (of `bound_param_bytes[e]`).
// Errors: a pool used by entries on different devices, a device type requested by device_index
// that `devices` lacks, a storage_scope other than "", "global" and the texture scopes, texture
// storage off OpenCL, with a last dimension other than 4, or shared with entries of another scope or
// dtype.
StatusOr<MemoryPlan> PlanMemory(const GraphSpec& graph, const std::vector<DLDevice>& devices,
                                const std::vector<bool>& bound_param_entries);

// "1.5 MiB".
std::string FormatBytes(uint64_t bytes);

}  // namespace sorun

#endif  // SORUN_GRAPH_EXECUTOR_MEMORY_PLAN_H_
