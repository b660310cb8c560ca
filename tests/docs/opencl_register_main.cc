// The wrapper of docs/opencl.md's registration fragment (//tests/docs:opencl_register): the block replaces
// the DOC-SAMPLE lines below. The program registers the OpenCL backend by hand, as a program linking
// //backends/opencl without //api:sorun does, and exits 0 when that worked (no OpenCL platform is needed).
#include <cstdio>

#include "base/status.h"
// DOC-SAMPLE-INCLUDES

namespace {

sorun::Status RegisterBackends() {
  // DOC-SAMPLE
  return sorun::Status::Ok();
}

}  // namespace

int main() {
  sorun::Status status = RegisterBackends();
  std::printf("%s\n", status.ToString().c_str());
  return status.ok() ? 0 : 1;
}
