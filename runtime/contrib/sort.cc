#include "runtime/contrib/sort.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "base/half.h"
#include "runtime/data_type.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"

namespace sorun {
namespace {

// How elements of one data type compare. The sorts below run on positions with these through
// function pointers: one instantiation of the std algorithms for every dtype (the runtime's size),
// with the comparisons TVM's typed code makes, in the same order, so even NaN ties come out alike.
struct ElementType {
  size_t bytes;
  bool (*less)(const void* a, const void* b);
  bool (*equal)(const void* a, const void* b);
};

template <typename T>
T Load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
bool Less(const void* a, const void* b) {
  return Load<T>(a) < Load<T>(b);
}
template <typename T>
bool Equal(const void* a, const void* b) {
  return Load<T>(a) == Load<T>(b);
}
// float16 compares through float, as TVM's sort does (its bits are what gets copied).
bool HalfLess(const void* a, const void* b) { return HalfToFloat(Load<uint16_t>(a)) < HalfToFloat(Load<uint16_t>(b)); }
bool HalfEqual(const void* a, const void* b) {
  return HalfToFloat(Load<uint16_t>(a)) == HalfToFloat(Load<uint16_t>(b));
}
template <typename T>
constexpr ElementType kElement{sizeof(T), &Less<T>, &Equal<T>};
constexpr ElementType kHalfElement{2, &HalfLess, &HalfEqual};

// The order of positions 0..extent-1 of one row (element k at base + k * stride bytes). sort and
// argsort compare values only (std::stable_sort keeps equal values in index order); topk orders equal
// values by index, so its bounded heap keeps the same k elements a sort would.
struct RowOrder {
  const ElementType* type;
  const uint8_t* base;
  int64_t stride;
  bool ascending;
  bool ties_by_index;
  const void* At(int64_t k) const { return base + k * stride; }
  bool operator()(int64_t a, int64_t b) const {
    if (ties_by_index && type->equal(At(a), At(b))) return a < b;
    return ascending ? type->less(At(a), At(b)) : type->less(At(b), At(a));
  }
};

// A tensor seen along one axis: element (o, k, i) is at (o * extent + k) * inner + i.
struct AxisView {
  int64_t outer = 1;
  int64_t extent = 0;
  int64_t inner = 1;
};

// The DLTensor argument `i` of `fn`, on the host and compact.
StatusOr<DLTensor*> HostTensor(const PackedArgs& args, int i, const char* fn, const char* role) {
  const std::string what = std::string(fn) + " " + role + " (argument " + std::to_string(i) + ")";
  auto t = args.GetDLTensor(i);
  if (!t.ok()) return std::move(t).status().Annotate(what);
  SORUN_RETURN_IF_ERROR(CheckDLTensorFields(**t, what));
  if ((*t)->device.device_type != kDLCPU) {
    return InvalidArgument(what + " is on " + DeviceToString((*t)->device) + "; sorun sorts host tensors");
  }
  if (!IsCompact(**t)) return InvalidArgument(what + " is strided; sorun sorts compact tensors");
  if ((*t)->dtype.lanes != 1) return InvalidArgument(what + " has vector dtype " + DTypeToString((*t)->dtype));
  return *t;
}

// `axis` (negative counts from the end) checked against `data`'s rank, and the view along it.
StatusOr<std::pair<int, AxisView>> ViewAlong(const DLTensor& data, int64_t axis, const char* fn) {
  if (axis < 0) axis += data.ndim;
  if (axis < 0 || axis >= data.ndim) {
    return InvalidArgument(std::string(fn) + ": axis " + std::to_string(axis) + " is out of range for a " +
                           std::to_string(data.ndim) + "-d input");
  }
  SORUN_RETURN_IF_ERROR(ShapeNumElements(data.shape, data.ndim).status());  // no overflow in the products below
  AxisView v;
  for (int d = 0; d < data.ndim; ++d) {
    if (d < axis) v.outer *= data.shape[d];
    if (d > axis) v.inner *= data.shape[d];
  }
  v.extent = data.shape[axis];
  return std::make_pair(static_cast<int>(axis), v);
}

// `out` must have `data`'s shape with dimension `axis` replaced by `extent`.
Status CheckShape(const DLTensor& data, int axis, int64_t extent, const DLTensor& out, const char* fn,
                  const char* role) {
  bool same = out.ndim == data.ndim;
  for (int d = 0; same && d < data.ndim; ++d) same = out.shape[d] == (d == axis ? extent : data.shape[d]);
  if (same) return Status::Ok();
  std::vector<int64_t> want(data.shape, data.shape + data.ndim);
  want[static_cast<size_t>(axis)] = extent;
  return InvalidArgument(std::string(fn) + ": " + role + " is " + ShapeToString(out.shape, out.ndim) + ", expected " +
                         ShapeToString(want.data(), static_cast<int>(want.size())));
}

void* Elements(const DLTensor& t) { return static_cast<uint8_t*>(t.data) + t.byte_offset; }

bool IsIndexDType(DLDataType t) {
  return (t.code == kDLInt && (t.bits == 8 || t.bits == 32 || t.bits == 64)) || (t.code == kDLUInt && t.bits == 8) ||
         (t.code == kDLFloat && (t.bits == 32 || t.bits == 64));
}

// Writes `index` as element `pos` of an index tensor (IsIndexDType), converted as TVM's static_cast does.
void StoreIndex(const DLTensor& out, int64_t pos, int64_t index) {
  void* base = Elements(out);
  switch (out.dtype.code * 256 + out.dtype.bits) {
    case kDLInt * 256 + 8: static_cast<int8_t*>(base)[pos] = static_cast<int8_t>(index); break;
    case kDLInt * 256 + 32: static_cast<int32_t*>(base)[pos] = static_cast<int32_t>(index); break;
    case kDLInt * 256 + 64: static_cast<int64_t*>(base)[pos] = index; break;
    case kDLUInt * 256 + 8: static_cast<uint8_t*>(base)[pos] = static_cast<uint8_t>(index); break;
    case kDLFloat * 256 + 32: static_cast<float*>(base)[pos] = static_cast<float>(index); break;
    default: static_cast<double*>(base)[pos] = static_cast<double>(index); break;  // float64
  }
}

// The element type of `dtype` among those TVM's sort functions take.
StatusOr<const ElementType*> ElementTypeOf(DLDataType dtype, const char* fn) {
  switch (dtype.code * 256 + dtype.bits) {
    case kDLFloat * 256 + 16: return &kHalfElement;
    case kDLFloat * 256 + 32: return &kElement<float>;
    case kDLFloat * 256 + 64: return &kElement<double>;
    case kDLInt * 256 + 8: return &kElement<int8_t>;
    case kDLInt * 256 + 32: return &kElement<int32_t>;
    case kDLInt * 256 + 64: return &kElement<int64_t>;
    case kDLUInt * 256 + 8: return &kElement<uint8_t>;
    default:
      return InvalidArgument(std::string(fn) + ": data of dtype " + DTypeToString(dtype) +
                             " (TVM sorts float16/32/64, int8/32/64 and uint8)");
  }
}

// sort and argsort: every position along the axis, stably sorted; writes the values (sort) or their
// positions (argsort) into `out`.
void SortAlong(const DLTensor& data, const ElementType& type, const AxisView& v, bool ascending, const DLTensor& out,
               bool write_indices) {
  const uint8_t* in = static_cast<const uint8_t*>(Elements(data));
  uint8_t* values = static_cast<uint8_t*>(Elements(out));
  const int64_t bytes = static_cast<int64_t>(type.bytes);
  std::vector<int64_t> row(static_cast<size_t>(v.extent));
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t base = o * v.extent * v.inner + i;
      std::iota(row.begin(), row.end(), int64_t{0});
      std::stable_sort(row.begin(), row.end(), RowOrder{&type, in + base * bytes, v.inner * bytes, ascending, false});
      for (int64_t k = 0; k < v.extent; ++k) {
        const int64_t pos = base + k * v.inner;
        const int64_t from = row[static_cast<size_t>(k)];
        if (write_indices) {
          StoreIndex(out, pos, from);
        } else {
          std::memcpy(values + pos * bytes, in + (base + from * v.inner) * bytes, type.bytes);
        }
      }
    }
  }
}

// topk: the k best positions along the axis (TVM's bounded heap, then a sort of the k).
void TopkAlong(const DLTensor& data, const ElementType& type, const AxisView& v, int64_t k, bool ascending,
               const DLTensor* values, const DLTensor* indices) {
  const uint8_t* in = static_cast<const uint8_t*>(Elements(data));
  const int64_t bytes = static_cast<int64_t>(type.bytes);
  std::vector<int64_t> heap;
  heap.reserve(static_cast<size_t>(std::min(k, v.extent)) + 1);
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const int64_t src = o * v.extent * v.inner + i;
      const int64_t dst = o * k * v.inner + i;
      const RowOrder better{&type, in + src * bytes, v.inner * bytes, ascending, true};
      heap.clear();
      int64_t pos = 0;
      for (; pos < k && pos < v.extent; ++pos) heap.push_back(pos);
      std::make_heap(heap.begin(), heap.end(), better);  // heap.front(): the worst of those kept
      for (; pos < v.extent; ++pos) {
        if (!better(pos, heap.front())) continue;
        heap.push_back(pos);
        std::push_heap(heap.begin(), heap.end(), better);
        std::pop_heap(heap.begin(), heap.end(), better);
        heap.pop_back();
      }
      std::stable_sort(heap.begin(), heap.end(), better);
      for (size_t r = 0; r < heap.size(); ++r) {
        const int64_t at = dst + static_cast<int64_t>(r) * v.inner;
        if (indices != nullptr) StoreIndex(*indices, at, heap[r]);
        if (values != nullptr) {
          std::memcpy(static_cast<uint8_t*>(Elements(*values)) + at * bytes, better.At(heap[r]), type.bytes);
        }
      }
    }
  }
}

// (data, out, int axis, bool is_ascend): sort (`indices` false) or argsort (true).
Status SortOrArgsort(PackedArgs args, bool indices) {
  const char* fn = indices ? keys::kContribArgsort : keys::kContribSort;
  SORUN_RETURN_IF_ERROR(args.ExpectCount(4, fn));
  SORUN_ASSIGN_OR_RETURN(DLTensor * data, HostTensor(args, 0, fn, "data"));
  SORUN_ASSIGN_OR_RETURN(DLTensor * out, HostTensor(args, 1, fn, "output"));
  SORUN_ASSIGN_OR_RETURN(int64_t axis_arg, args.GetInt(2));
  SORUN_ASSIGN_OR_RETURN(int64_t ascending, args.GetInt(3));
  SORUN_ASSIGN_OR_RETURN(auto axis_view, ViewAlong(*data, axis_arg, fn));
  const int axis = axis_view.first;
  const AxisView view = axis_view.second;
  SORUN_RETURN_IF_ERROR(CheckShape(*data, axis, view.extent, *out, fn, "the output"));
  if (indices && !IsIndexDType(out->dtype)) {
    return InvalidArgument(std::string(fn) + ": output of dtype " + DTypeToString(out->dtype) +
                           " (indices are int8/32/64, uint8 or float32/64)");
  }
  if (!indices && out->dtype != data->dtype) {
    return InvalidArgument(std::string(fn) + ": output is " + DTypeToString(out->dtype) + ", data " +
                           DTypeToString(data->dtype));
  }
  SORUN_ASSIGN_OR_RETURN(const ElementType* type, ElementTypeOf(data->dtype, fn));
  SortAlong(*data, *type, view, ascending != 0, *out, indices);
  return Status::Ok();
}

// (data, values and/or indices, int k, int axis, str ret_type, bool is_ascend).
Status Topk(PackedArgs args) {
  const char* fn = keys::kContribTopk;
  SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(6, fn));
  const int n = args.size();
  SORUN_ASSIGN_OR_RETURN(std::string_view ret_type, args.GetStr(n - 2));
  const int outputs = ret_type == "both" ? 2 : ret_type == "values" || ret_type == "indices" ? 1 : 0;
  if (outputs == 0) {
    return InvalidArgument(std::string(fn) + ": ret_type '" + std::string(ret_type) +
                           "' (expected both, values or indices)");
  }
  if (n != 5 + outputs) {
    return InvalidArgument(std::string(fn) + " with ret_type '" + std::string(ret_type) + "' takes " +
                           std::to_string(5 + outputs) + " arguments, got " + std::to_string(n));
  }
  SORUN_ASSIGN_OR_RETURN(DLTensor * data, HostTensor(args, 0, fn, "data"));
  DLTensor* values = nullptr;
  DLTensor* indices = nullptr;
  if (ret_type != "indices") {
    SORUN_ASSIGN_OR_RETURN(values, HostTensor(args, 1, fn, "values"));
  }
  if (ret_type != "values") {
    SORUN_ASSIGN_OR_RETURN(indices, HostTensor(args, outputs, fn, "indices"));
  }
  SORUN_ASSIGN_OR_RETURN(int64_t k, args.GetInt(n - 4));
  SORUN_ASSIGN_OR_RETURN(int64_t axis_arg, args.GetInt(n - 3));
  SORUN_ASSIGN_OR_RETURN(int64_t ascending, args.GetInt(n - 1));
  SORUN_ASSIGN_OR_RETURN(auto axis_view, ViewAlong(*data, axis_arg, fn));
  const int axis = axis_view.first;
  const AxisView view = axis_view.second;
  if (k < 1) k = view.extent;  // TVM: k < 1 means the whole axis
  if (values != nullptr) {
    SORUN_RETURN_IF_ERROR(CheckShape(*data, axis, k, *values, fn, "values"));
    if (values->dtype != data->dtype) {
      return InvalidArgument(std::string(fn) + ": values are " + DTypeToString(values->dtype) + ", data " +
                             DTypeToString(data->dtype));
    }
  }
  if (indices != nullptr) {
    SORUN_RETURN_IF_ERROR(CheckShape(*data, axis, k, *indices, fn, "indices"));
    if (!IsIndexDType(indices->dtype)) {
      return InvalidArgument(std::string(fn) + ": indices of dtype " + DTypeToString(indices->dtype) +
                             " (int8/32/64, uint8 or float32/64)");
    }
  }
  SORUN_ASSIGN_OR_RETURN(const ElementType* type, ElementTypeOf(data->dtype, fn));
  TopkAlong(*data, *type, view, k, ascending != 0, values, indices);
  return Status::Ok();
}

// (float32 data, int32 valid counts, int32 out, int axis, bool is_ascend): per row, the first count
// positions sorted, the rest in place (TVM's NMS helper).
Status ArgsortNms(PackedArgs args) {
  const char* fn = keys::kContribArgsortNms;
  SORUN_RETURN_IF_ERROR(args.ExpectCount(5, fn));
  SORUN_ASSIGN_OR_RETURN(DLTensor * data, HostTensor(args, 0, fn, "data"));
  SORUN_ASSIGN_OR_RETURN(DLTensor * counts, HostTensor(args, 1, fn, "valid counts"));
  SORUN_ASSIGN_OR_RETURN(DLTensor * out, HostTensor(args, 2, fn, "output"));
  SORUN_ASSIGN_OR_RETURN(int64_t axis_arg, args.GetInt(3));
  SORUN_ASSIGN_OR_RETURN(int64_t ascending, args.GetInt(4));
  if (data->dtype != Float32() || counts->dtype != Int32() || out->dtype != Int32()) {
    return InvalidArgument(std::string(fn) + ": takes float32 data, int32 counts and an int32 output, got " +
                           DTypeToString(data->dtype) + ", " + DTypeToString(counts->dtype) + ", " +
                           DTypeToString(out->dtype));
  }
  SORUN_ASSIGN_OR_RETURN(auto axis_view, ViewAlong(*data, axis_arg, fn));
  const int axis = axis_view.first;
  const AxisView view = axis_view.second;
  SORUN_RETURN_IF_ERROR(CheckShape(*data, axis, view.extent, *out, fn, "the output"));
  SORUN_ASSIGN_OR_RETURN(int64_t num_counts, ShapeNumElements(counts->shape, counts->ndim));
  if (num_counts != view.outer * view.inner) {
    return InvalidArgument(std::string(fn) + ": " + std::to_string(num_counts) + " valid counts for " +
                           std::to_string(view.outer * view.inner) + " rows");
  }
  const uint8_t* in = static_cast<const uint8_t*>(Elements(*data));
  const int32_t* count = static_cast<const int32_t*>(Elements(*counts));
  int32_t* result = static_cast<int32_t*>(Elements(*out));
  std::vector<int64_t> row;
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t i = 0; i < view.inner; ++i) {
      const int32_t valid = count[o * view.inner + i];
      if (valid < 0 || valid > view.extent) {
        return InvalidArgument(std::string(fn) + ": valid count " + std::to_string(valid) + " of row " +
                               std::to_string(o * view.inner + i) + " is outside [0, " + std::to_string(view.extent) +
                               "]");
      }
      const int64_t base = o * view.extent * view.inner + i;
      row.resize(static_cast<size_t>(valid));
      std::iota(row.begin(), row.end(), int64_t{0});
      std::stable_sort(row.begin(), row.end(),
                       RowOrder{&kElement<float>, in + base * 4, view.inner * 4, ascending != 0, false});
      for (int64_t k = 0; k < view.extent; ++k) {
        result[base + k * view.inner] = static_cast<int32_t>(k < valid ? row[static_cast<size_t>(k)] : k);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status RegisterSortFunctions(FunctionRegistry& registry) {
  SORUN_RETURN_IF_ERROR(registry.Register(
      keys::kContribSort,
      PackedFunc::FromBody(keys::kContribSort, [](PackedArgs args, Value*) { return SortOrArgsort(args, false); })));
  SORUN_RETURN_IF_ERROR(registry.Register(
      keys::kContribArgsort,
      PackedFunc::FromBody(keys::kContribArgsort, [](PackedArgs args, Value*) { return SortOrArgsort(args, true); })));
  SORUN_RETURN_IF_ERROR(
      registry.Register(keys::kContribTopk,
                        PackedFunc::FromBody(keys::kContribTopk, [](PackedArgs args, Value*) { return Topk(args); })));
  return registry.Register(
      keys::kContribArgsortNms,
      PackedFunc::FromBody(keys::kContribArgsortNms, [](PackedArgs args, Value*) { return ArgsortNms(args); }));
}

Status RegisterGlobalSortFunctions() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  FunctionRegistry& registry = FunctionRegistry::Global();
  if (registry.Get(keys::kContribSort).defined()) return Status::Ok();
  return RegisterSortFunctions(registry);
}

}  // namespace sorun
