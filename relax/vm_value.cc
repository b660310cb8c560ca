#include "relax/vm_value.h"

#include <string>

#include "runtime/data_type.h"

namespace sorun {
namespace relax {

const char* VmValueKindName(VmValueKind kind) {
  switch (kind) {
    case VmValueKind::kNull: return "null";
    case VmValueKind::kInt: return "int";
    case VmValueKind::kFloat: return "float";
    case VmValueKind::kDataType: return "dtype";
    case VmValueKind::kString: return "string";
    case VmValueKind::kShape: return "shape";
    case VmValueKind::kTensor: return "tensor";
    case VmValueKind::kStorage: return "storage";
    case VmValueKind::kTuple: return "tuple";
    case VmValueKind::kFunction: return "function";
    case VmValueKind::kVmContext: return "VM context";
  }
  return "?";
}

std::string DescribeVmValue(const VmValue& v) {
  switch (v.kind()) {
    case VmValueKind::kInt: return "int " + std::to_string(v.int_value());
    case VmValueKind::kTensor: return "tensor " + v.tensor().Describe();
    case VmValueKind::kShape: {
      std::string s = "shape (";
      for (size_t i = 0; i < v.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(v.shape()[i]);
      return s + ")";
    }
    case VmValueKind::kTuple: return "tuple of " + std::to_string(v.tuple()->fields.size());
    case VmValueKind::kDataType: return "dtype " + DTypeToString(v.dtype());
    default: return VmValueKindName(v.kind());
  }
}

}  // namespace relax
}  // namespace sorun
