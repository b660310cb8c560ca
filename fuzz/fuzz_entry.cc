// The libFuzzer entry point of one fuzz target. Every <target>_fuzzer binary compiles this file with
// SORUN_FUZZ_FUNCTION (a local define set in fuzz/BUILD.bazel) naming its body in fuzz_targets.h.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_targets.h"

#ifndef SORUN_FUZZ_FUNCTION
#error "SORUN_FUZZ_FUNCTION must name a body of fuzz/fuzz_targets.h"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sorun::fuzz::SORUN_FUZZ_FUNCTION(data, size);
}
