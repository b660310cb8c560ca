// The OpenCL entry points the OpenCL backend calls, forwarded to the system ICD loader
// (libOpenCL.so.1) opened with dlopen on the first call. Part of the backend, so that nothing that
// links sorun (the CLI, libsorun.so, the Python extension, the Triton backend) needs libOpenCL.so.1 to
// start: without an OpenCL loader every call reports CL_PLATFORM_NOT_FOUND_KHR, which the backend
// turns into its usual "no OpenCL platform" Unavailable error; with one (PoCL here), OpenCL devices
// work. The list is exactly the cl* functions the backend calls; one missing here is an undefined
// symbol at link time (the backend no longer links -lOpenCL).
// Thread-safe: the loader is opened once (function-local static) and symbols are resolved with dlsym,
// which is thread-safe; each resolved pointer is cached in an atomic.
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>

#include <atomic>

namespace {

void* OpenClLoader() {
  static void* const handle = [] {
    void* h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    return h != nullptr ? h : dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  }();
  return handle;
}

template <typename Fn>
Fn Resolve(std::atomic<void*>* cache, const char* name) {
  void* f = cache->load(std::memory_order_acquire);
  if (f == nullptr) {
    void* handle = OpenClLoader();
    if (handle == nullptr) return nullptr;
    f = dlsym(handle, name);
    cache->store(f, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(f);
}

}  // namespace

// A cl_int-returning entry point: CL_PLATFORM_NOT_FOUND_KHR without a loader.
#define SORUN_CL_FORWARD_STATUS(name, params, args)           \
  extern "C" cl_int name params {                             \
    static std::atomic<void*> cache{nullptr};                 \
    auto f = Resolve<decltype(&::name)>(&cache, #name);       \
    return f != nullptr ? f args : CL_PLATFORM_NOT_FOUND_KHR; \
  }

// A handle-returning entry point (its last parameter is errcode_ret): null without a loader.
#define SORUN_CL_FORWARD_HANDLE(name, ret, params, args)                  \
  extern "C" ret name params {                                            \
    static std::atomic<void*> cache{nullptr};                             \
    auto f = Resolve<decltype(&::name)>(&cache, #name);                   \
    if (f != nullptr) return f args;                                      \
    if (errcode_ret != nullptr) *errcode_ret = CL_PLATFORM_NOT_FOUND_KHR; \
    return nullptr;                                                       \
  }

// clang-format off
SORUN_CL_FORWARD_STATUS(clBuildProgram, (cl_program program, cl_uint num_devices, const cl_device_id * device_list, const char * options, void (* pfn_notify)(cl_program program, void * user_data), void * user_data), (program, num_devices, device_list, options, pfn_notify, user_data))
SORUN_CL_FORWARD_HANDLE(clCreateBuffer, cl_mem, (cl_context context, cl_mem_flags flags, size_t size, void * host_ptr, cl_int * errcode_ret), (context, flags, size, host_ptr, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateCommandQueue, cl_command_queue, (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int * errcode_ret), (context, device, properties, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateContext, cl_context, (const cl_context_properties * properties, cl_uint num_devices, const cl_device_id * devices, void (* pfn_notify)(const char * errinfo, const void * private_info, size_t cb, void * user_data), void * user_data, cl_int * errcode_ret), (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateImage, cl_mem, (cl_context context, cl_mem_flags flags, const cl_image_format * image_format, const cl_image_desc * image_desc, void * host_ptr, cl_int * errcode_ret), (context, flags, image_format, image_desc, host_ptr, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateKernel, cl_kernel, (cl_program program, const char * kernel_name, cl_int * errcode_ret), (program, kernel_name, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateProgramWithBinary, cl_program, (cl_context context, cl_uint num_devices, const cl_device_id * device_list, const size_t * lengths, const unsigned char ** binaries, cl_int * binary_status, cl_int * errcode_ret), (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret))
SORUN_CL_FORWARD_HANDLE(clCreateProgramWithSource, cl_program, (cl_context context, cl_uint count, const char ** strings, const size_t * lengths, cl_int * errcode_ret), (context, count, strings, lengths, errcode_ret))
SORUN_CL_FORWARD_STATUS(clEnqueueCopyBuffer, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueCopyBufferToImage, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset, const size_t * dst_origin, const size_t * region, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueCopyImage, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image, const size_t * src_origin, const size_t * dst_origin, const size_t * region, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, src_image, dst_image, src_origin, dst_origin, region, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueCopyImageToBuffer, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer, const size_t * src_origin, const size_t * region, size_t dst_offset, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueNDRangeKernel, (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t * global_work_offset, const size_t * global_work_size, const size_t * local_work_size, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueReadBuffer, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size, void * ptr, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueReadImage, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read, const size_t * origin, const size_t * region, size_t row_pitch, size_t slice_pitch, void * ptr, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueWriteBuffer, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size, const void * ptr, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clEnqueueWriteImage, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write, const size_t * origin, const size_t * region, size_t input_row_pitch, size_t input_slice_pitch, const void * ptr, cl_uint num_events_in_wait_list, const cl_event * event_wait_list, cl_event * event), (command_queue, image, blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event))
SORUN_CL_FORWARD_STATUS(clFinish, (cl_command_queue command_queue), (command_queue))
SORUN_CL_FORWARD_STATUS(clGetDeviceIDs, (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id * devices, cl_uint * num_devices), (platform, device_type, num_entries, devices, num_devices))
SORUN_CL_FORWARD_STATUS(clGetDeviceInfo, (cl_device_id device, cl_device_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (device, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clGetKernelInfo, (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (kernel, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clGetMemObjectInfo, (cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (memobj, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clGetPlatformIDs, (cl_uint num_entries, cl_platform_id * platforms, cl_uint * num_platforms), (num_entries, platforms, num_platforms))
SORUN_CL_FORWARD_STATUS(clGetPlatformInfo, (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (platform, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clGetProgramBuildInfo, (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (program, device, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clGetProgramInfo, (cl_program program, cl_program_info param_name, size_t param_value_size, void * param_value, size_t * param_value_size_ret), (program, param_name, param_value_size, param_value, param_value_size_ret))
SORUN_CL_FORWARD_STATUS(clReleaseCommandQueue, (cl_command_queue command_queue), (command_queue))
SORUN_CL_FORWARD_STATUS(clReleaseContext, (cl_context context), (context))
SORUN_CL_FORWARD_STATUS(clReleaseEvent, (cl_event event), (event))
SORUN_CL_FORWARD_STATUS(clReleaseKernel, (cl_kernel kernel), (kernel))
SORUN_CL_FORWARD_STATUS(clReleaseMemObject, (cl_mem memobj), (memobj))
SORUN_CL_FORWARD_STATUS(clReleaseProgram, (cl_program program), (program))
SORUN_CL_FORWARD_STATUS(clSetKernelArg, (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void * arg_value), (kernel, arg_index, arg_size, arg_value))
SORUN_CL_FORWARD_STATUS(clWaitForEvents, (cl_uint num_events, const cl_event * event_list), (num_events, event_list))
// clang-format on
