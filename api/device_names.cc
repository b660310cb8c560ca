// Device and dtype names of the public API (api/sorun.h), over the runtime's one implementation in
// runtime/data_type.h. sorun::ParseDevice itself is runtime/data_type.cc's: api/sorun.h declares
// the same function.
#include "api/sorun.h"
#include "runtime/data_type.h"

namespace sorun {

std::string DeviceName(DLDevice device) { return DeviceToString(device); }

std::string DataTypeName(DLDataType dtype) { return DTypeToString(dtype); }

StatusOr<DLDataType> ParseDataType(std::string_view text) {
  // ParseDType also reads TVM's "" (void), which no DataTypeName produces.
  if (text.empty()) return InvalidArgument("empty dtype name (expected e.g. float32, int8, bool, float32x4)");
  return ParseDType(text);
}

}  // namespace sorun
