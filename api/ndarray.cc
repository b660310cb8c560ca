// sorun::NDArray (api/sorun.h): the public face of the runtime's reference-counted Tensor.
#include <utility>

#include "api/sorun.h"
#include "api/sorun_impl.h"
#include "runtime/data_type.h"

namespace sorun {
namespace {

// What an undefined NDArray shows: no data, no shape.
const DLTensor& UndefinedDLTensor() {
  static const DLTensor undefined{};
  return undefined;
}

const std::vector<int64_t>& NoShape() {
  static const std::vector<int64_t>* empty = new std::vector<int64_t>();
  return *empty;
}

Status Undefined(const char* what) { return FailedPrecondition(std::string(what) + " of an undefined sorun::NDArray"); }

}  // namespace

NDArray::NDArray() = default;
NDArray::~NDArray() = default;
NDArray::NDArray(const NDArray&) = default;
NDArray& NDArray::operator=(const NDArray&) = default;
NDArray::NDArray(NDArray&&) noexcept = default;
NDArray& NDArray::operator=(NDArray&&) noexcept = default;
NDArray::NDArray(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

StatusOr<NDArray> NDArray::Empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice device) {
  // The CPU is always there; another device needs its backend registered.
  if (device.device_type != kDLCPU) SORUN_RETURN_IF_ERROR(Initialize());
  SORUN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Empty(shape, dtype, device));
  return NDArray(std::make_shared<const Impl>(std::move(tensor)));
}

StatusOr<NDArray> NDArray::FromDLPack(DLManagedTensor* managed) {
  SORUN_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromDLPack(managed));
  return NDArray(std::make_shared<const Impl>(std::move(tensor)));
}

bool NDArray::defined() const { return impl_ != nullptr; }
const DLTensor& NDArray::dl() const { return impl_ ? *impl_->tensor.dl() : UndefinedDLTensor(); }
void* NDArray::data() const { return impl_ ? impl_->tensor.data_as<void>() : nullptr; }
const std::vector<int64_t>& NDArray::shape() const { return impl_ ? impl_->tensor.shape() : NoShape(); }
DLDataType NDArray::dtype() const { return dl().dtype; }
DLDevice NDArray::device() const { return dl().device; }
int64_t NDArray::num_elements() const { return impl_ ? impl_->tensor.num_elements() : 0; }
uint64_t NDArray::nbytes() const { return impl_ ? impl_->tensor.nbytes() : 0; }
std::string NDArray::Describe() const { return impl_ ? impl_->tensor.Describe() : "undefined NDArray"; }

DLManagedTensor* NDArray::ToDLPack() const { return impl_ ? impl_->tensor.ToDLPack() : nullptr; }

StatusOr<NDArray> NDArray::CopyTo(DLDevice device) const {
  if (!impl_) return Undefined("CopyTo");
  SORUN_ASSIGN_OR_RETURN(Tensor copy, impl_->tensor.CopyToDevice(device));
  return NDArray(std::make_shared<const Impl>(std::move(copy)));
}

Status NDArray::CopyFrom(const DLTensor& src) const {
  if (!impl_) return Undefined("CopyFrom");
  return impl_->tensor.CopyFrom(src);
}

}  // namespace sorun
