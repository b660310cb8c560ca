// OpenclDeviceApi's texture memory (image2d for TVM's "global.texture*" scopes) and TVM's
// "device_api.opencl.alloc_nd" / "free_nd" global functions. See opencl_device_api.h.
#include <limits>
#include <string>

#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_status.h"
#include "runtime/data_type.h"
#include "runtime/function_registry.h"
#include "runtime/registry_keys.h"
#include "runtime/tensor.h"
#include "runtime/texture_layout.h"

namespace sorun {
namespace {

constexpr const char* kAllocNd = keys::kOpenclAllocNd;
constexpr const char* kFreeNd = keys::kOpenclFreeNd;

// The channel type of an RGBA image of `dtype` texels (TVM's DTypeToOpenCLChannelType).
StatusOr<cl_channel_type> ChannelType(DLDataType dtype) {
  if (dtype.lanes == 1) {
    if (dtype.code == kDLFloat && dtype.bits == 32) return static_cast<cl_channel_type>(CL_FLOAT);
    if (dtype.code == kDLFloat && dtype.bits == 16) return static_cast<cl_channel_type>(CL_HALF_FLOAT);
    if (dtype.code == kDLInt && dtype.bits == 8) return static_cast<cl_channel_type>(CL_SIGNED_INT8);
    if (dtype.code == kDLInt && dtype.bits == 16) return static_cast<cl_channel_type>(CL_SIGNED_INT16);
    if (dtype.code == kDLInt && dtype.bits == 32) return static_cast<cl_channel_type>(CL_SIGNED_INT32);
    if (dtype.code == kDLUInt && dtype.bits == 8) return static_cast<cl_channel_type>(CL_UNSIGNED_INT8);
    if (dtype.code == kDLUInt && dtype.bits == 16) return static_cast<cl_channel_type>(CL_UNSIGNED_INT16);
    if (dtype.code == kDLUInt && dtype.bits == 32) return static_cast<cl_channel_type>(CL_UNSIGNED_INT32);
  }
  return InvalidArgument("texture memory of dtype " + DTypeToString(dtype) +
                         " is not supported (float32, float16, [u]int8/16/32)");
}

template <typename T>
Status DeviceInfo(cl_device_id device, cl_device_info param, T* out, const char* name, const std::string& what) {
  return opencl::ClStatus(clGetDeviceInfo(device, param, sizeof(T), out, nullptr),
                          std::string("clGetDeviceInfo(") + name + ")", what);
}

}  // namespace

StatusOr<void*> OpenclDeviceApi::AllocTexture(DLDevice device, std::string_view scope, int64_t width, int64_t height,
                                              DLDataType dtype) {
  const std::string what = "texture of " + std::to_string(width) + " x " + std::to_string(height) + " " +
                           DTypeToString(dtype) + " RGBA texels in scope '" + std::string(scope) + "' on " +
                           DeviceToString(device);
  const int64_t probe_shape[3] = {1, 1, 4};
  SORUN_RETURN_IF_ERROR_CTX(TextureShapeFor(scope, probe_shape, 3).status(), "allocating a " + what);
  SORUN_ASSIGN_OR_RETURN(cl_channel_type channel_type, ChannelType(dtype));
  if (width <= 0 || height <= 0) return InvalidArgument("cannot allocate a " + what + ": sizes must be positive");
  SORUN_ASSIGN_OR_RETURN(OpenclQueue q, QueueFor(device, "AllocTexture"));
  SORUN_ASSIGN_OR_RETURN(const OpenclDeviceInfo* info, devices_->Info(device.device_id));
  cl_bool image_support = CL_FALSE;
  size_t max_width = 0, max_height = 0;
  SORUN_RETURN_IF_ERROR(
      DeviceInfo(info->device, CL_DEVICE_IMAGE_SUPPORT, &image_support, "CL_DEVICE_IMAGE_SUPPORT", what));
  if (image_support != CL_TRUE) {
    return Unimplemented("cannot allocate a " + what + ": the device (" + info->name +
                         ") has no image support (CL_DEVICE_IMAGE_SUPPORT is false)");
  }
  SORUN_RETURN_IF_ERROR(DeviceInfo(info->device, CL_DEVICE_IMAGE2D_MAX_WIDTH, &max_width, "IMAGE2D_MAX_WIDTH", what));
  SORUN_RETURN_IF_ERROR(
      DeviceInfo(info->device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, &max_height, "IMAGE2D_MAX_HEIGHT", what));
  if (static_cast<uint64_t>(width) > max_width || static_cast<uint64_t>(height) > max_height) {
    return ResourceExhausted("cannot allocate a " + what + ": the device's largest image2d is " +
                             std::to_string(max_width) + " x " + std::to_string(max_height));
  }
  {
    // Best fit among the cached images of this device, scope and dtype that are large enough.
    std::lock_guard<std::mutex> lock(textures_mutex_);
    cl_mem best = nullptr;
    size_t best_area = std::numeric_limits<size_t>::max();
    for (auto& kv : textures_) {
      const Texture& t = kv.second;
      if (t.in_use || t.device_id != device.device_id || t.scope != scope || !(t.dtype == dtype)) continue;
      if (t.width < static_cast<size_t>(width) || t.height < static_cast<size_t>(height)) continue;
      if (t.width * t.height < best_area) {
        best = kv.first;
        best_area = t.width * t.height;
      }
    }
    if (best != nullptr) {
      textures_[best].in_use = true;
      return static_cast<void*>(best);
    }
  }
  cl_image_format format = {CL_RGBA, channel_type};
  cl_image_desc desc{};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = static_cast<size_t>(width);
  desc.image_height = static_cast<size_t>(height);
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateImage(q.context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  if (err != CL_SUCCESS || mem == nullptr) {
    return opencl::ClStatus(err != CL_SUCCESS ? err : CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateImage",
                            "allocating a " + what);
  }
  Texture t;
  t.device_id = device.device_id;
  t.scope = std::string(scope);
  t.dtype = dtype;
  t.width = static_cast<size_t>(width);
  t.height = static_cast<size_t>(height);
  t.in_use = true;
  std::lock_guard<std::mutex> lock(textures_mutex_);
  textures_.emplace(mem, std::move(t));
  return static_cast<void*>(mem);
}

Status OpenclDeviceApi::FreeTexture(DLDevice device, void* ptr) {
  std::lock_guard<std::mutex> lock(textures_mutex_);
  auto it = textures_.find(static_cast<cl_mem>(ptr));
  if (it == textures_.end() || !it->second.in_use || device.device_type != kDLOpenCL ||
      it->second.device_id != device.device_id) {
    return InvalidArgument(std::string(kFreeNd) + ": pointer was not allocated as texture memory on " +
                           DeviceToString(device) + " (or was already freed)");
  }
  it->second.in_use = false;
  return Status::Ok();
}

size_t OpenclDeviceApi::texture_count(int device_id) {
  std::lock_guard<std::mutex> lock(textures_mutex_);
  size_t n = 0;
  for (const auto& kv : textures_) n += kv.second.device_id == device_id;
  return n;
}

size_t OpenclDeviceApi::textures_in_use(int device_id) {
  std::lock_guard<std::mutex> lock(textures_mutex_);
  size_t n = 0;
  for (const auto& kv : textures_) n += kv.second.device_id == device_id && kv.second.in_use;
  return n;
}

Status OpenclDeviceApi::ImageRegion(const Texture& image, const DLTensor& t, uint64_t nbytes, const char* side,
                                    size_t region[3]) {
  const std::string what = std::string("copy ") + side + " " + DescribeDLTensor(t) + " (an image2d of " +
                           std::to_string(image.width) + " x " + std::to_string(image.height) + " " +
                           DTypeToString(image.dtype) + " texels, scope '" + image.scope + "')";
  if (t.byte_offset != 0)
    return InvalidArgument(what + ": byte_offset " + std::to_string(t.byte_offset) + " into an image");
  if (!(t.dtype == image.dtype)) return InvalidArgument(what + ": the tensor's dtype is not the image's");
  SORUN_ASSIGN_OR_RETURN(TextureShape shape, TextureShapeFor(image.scope, t.shape, t.ndim));
  if (shape.channels != 4) {
    return InvalidArgument(what + ": the last dimension is " + std::to_string(shape.channels) +
                           "; an RGBA image holds 4 values per texel");
  }
  if (static_cast<uint64_t>(shape.width) > image.width || static_cast<uint64_t>(shape.height) > image.height) {
    return InvalidArgument(what + ": the tensor needs " + std::to_string(shape.width) + " x " +
                           std::to_string(shape.height) + " texels");
  }
  const uint64_t region_bytes =
      static_cast<uint64_t>(shape.width) * static_cast<uint64_t>(shape.height) * 4 * ((image.dtype.bits + 7) / 8);
  if (region_bytes != nbytes) {
    return InvalidArgument(what + ": its " + std::to_string(region_bytes) + " bytes of texels are not the " +
                           std::to_string(nbytes) + " bytes copied");
  }
  region[0] = static_cast<size_t>(shape.width);
  region[1] = static_cast<size_t>(shape.height);
  region[2] = 1;
  return Status::Ok();
}

Status RegisterOpenclTextureFunctions(OpenclDeviceApi* api) {
  FunctionRegistry& registry = FunctionRegistry::Global();
  if (registry.Get(kAllocNd).defined()) return Status::Ok();
  SORUN_RETURN_IF_ERROR(registry.Register(
      kAllocNd, PackedFunc::FromBody(kAllocNd, [api](PackedArgs args, Value* ret) -> Status {
        SORUN_RETURN_IF_ERROR(args.ExpectCountAtLeast(7, kAllocNd));
        SORUN_ASSIGN_OR_RETURN(int64_t device_type, args.GetInt(0));
        SORUN_ASSIGN_OR_RETURN(int64_t device_id, args.GetInt(1));
        SORUN_ASSIGN_OR_RETURN(int64_t code, args.GetInt(2));
        SORUN_ASSIGN_OR_RETURN(int64_t bits, args.GetInt(3));
        SORUN_ASSIGN_OR_RETURN(std::string_view scope, args.GetStr(4));
        SORUN_ASSIGN_OR_RETURN(int64_t ndim, args.GetInt(5));
        SORUN_ASSIGN_OR_RETURN(void* shape_handle, args.GetHandle(6));
        const std::string where = std::string(kAllocNd) + "(scope '" + std::string(scope) + "')";
        if (!IsTextureScope(scope)) return InvalidArgument(where + ": not a texture memory scope");
        if (ndim == 3) {
          // TVM 0.20+: {width, height, depth} and a channel size -> an image2d_array.
          return Unimplemented(where +
                               ": 3-d (image2d_array) textures of TVM 0.20+ are not supported; sorun "
                               "allocates TVM 0.16's 2-d image2d textures");
        }
        if (ndim != 2 || shape_handle == nullptr || args.size() != 7) {
          return InvalidArgument(where + ": expected 7 arguments with a 2-d {width, height} shape, got " +
                                 std::to_string(args.size()) + " arguments and ndim " + std::to_string(ndim));
        }
        if (code < 0 || code > 255 || bits <= 0 || bits > 255) {
          return InvalidArgument(where + ": bad dtype code " + std::to_string(code) + " bits " + std::to_string(bits));
        }
        const int64_t* shape = static_cast<const int64_t*>(shape_handle);
        DLDevice device{static_cast<DLDeviceType>(device_type), static_cast<int32_t>(device_id)};
        DLDataType dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
        SORUN_ASSIGN_OR_RETURN(void* image, api->AllocTexture(device, scope, shape[0], shape[1], dtype));
        *ret = Value::Handle(image);
        return Status::Ok();
      })));
  return registry.Register(kFreeNd, PackedFunc::FromBody(kFreeNd, [api](PackedArgs args, Value* ret) -> Status {
                             SORUN_RETURN_IF_ERROR(args.ExpectCount(4, kFreeNd));
                             SORUN_ASSIGN_OR_RETURN(int64_t device_type, args.GetInt(0));
                             SORUN_ASSIGN_OR_RETURN(int64_t device_id, args.GetInt(1));
                             SORUN_ASSIGN_OR_RETURN(std::string_view scope, args.GetStr(2));
                             SORUN_ASSIGN_OR_RETURN(void* image, args.GetHandle(3));
                             if (!IsTextureScope(scope)) {
                               return InvalidArgument(std::string(kFreeNd) + ": scope '" + std::string(scope) +
                                                      "' is not a texture memory scope");
                             }
                             DLDevice device{static_cast<DLDeviceType>(device_type), static_cast<int32_t>(device_id)};
                             SORUN_RETURN_IF_ERROR(api->FreeTexture(device, image));
                             *ret = Value::Int(0);
                             return Status::Ok();
                           }));
}

}  // namespace sorun
