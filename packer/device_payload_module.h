// DevicePayloadModuleNode: a device module ("opencl", "cuda") that only holds its payload, for
// packing. sorun's OpenclModuleNode::Create enumerates the OpenCL platforms and devices
// (OpenclDevices::Global().DeviceCount()) when a module is created, so `sorun pack` would need an
// OpenCL platform to write an OpenCL model; this node writes the same payload bytes
// (WriteDeviceModulePayload) without touching any driver. CUDA modules are made with
// CreateCudaModule, which does not touch the driver either; this node serves both.
//
// MakeOpenclPayloadModule runs the check OpenclModuleNode::Create runs (PlanOpenclPayload: fmt "cl",
// non-blank source, "// Function:" pieces matching the kernels, launchable FunctionInfo and argument
// types), with its error codes, so a pack fails where a load would. The node is binary-serializable
// only (not runnable: it has no functions). Immutable; thread-safe.
#ifndef SORUN_PACKER_DEVICE_PAYLOAD_MODULE_H_
#define SORUN_PACKER_DEVICE_PAYLOAD_MODULE_H_

#include <string>

#include "backends/device_module_payload.h"
#include "base/status.h"
#include "runtime/module.h"

namespace sorun {

class DevicePayloadModuleNode final : public ModuleNode {
 public:
  DevicePayloadModuleNode(std::string type_key, DeviceModulePayload payload)
      : type_key_(std::move(type_key)), payload_(std::move(payload)) {}

  const char* type_key() const override { return type_key_.c_str(); }
  PackedFunc GetFunction(std::string_view name, const ObjectPtr<ModuleNode>& self) override { return PackedFunc(); }
  int property_mask() const override { return kModuleBinarySerializable; }
  Status SaveToBinary(BinaryWriter* writer) const override;
  std::vector<std::string> ListFunctionNames() const override;
  const DeviceModulePayload& payload() const { return payload_; }

 private:
  std::string type_key_;
  DeviceModulePayload payload_;
};

// An "opencl" payload module after OpenclModuleNode::Create's validation (see above); a payload
// without kernels is refused too (InvalidArgument).
StatusOr<Module> MakeOpenclPayloadModule(DeviceModulePayload payload);

}  // namespace sorun

#endif  // SORUN_PACKER_DEVICE_PAYLOAD_MODULE_H_
