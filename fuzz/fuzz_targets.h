// The bodies of sorun's fuzz targets: one function per parser, each taking arbitrary bytes.
//
// The same functions are linked into the libFuzzer binaries (fuzz/BUILD.bazel, --config=fuzz; each
// binary's LLVMFuzzerTestOneInput calls one of them) and into the regression test
// (tests/fuzz/regression_test.cc), which replays every committed crasher and seed through them in the
// ordinary gcc build. Each body calls the real entry point and, where cheap, the next stage:
//
//   FuzzBlob            __tvm_dev_mblob symbol bytes -> ReadBlobPrefix -> ParseModuleBlob with the
//                       registered loaders (GraphExecutorFactory, cuda, opencl) -> import tree ->
//                       memory plan (+ a tiny executor run on fake kernels) of a factory root
//   FuzzFactoryPayload  ReadFactoryPayload (headers only) and LoadGraphExecutorFactory -> executor
//   FuzzDevicePayload   ReadDeviceModulePayload -> CreateCudaModule / OpenCL module / launch configs
//   FuzzGraphJson       GraphSpec::Parse -> ToJson round trip -> PlanMemory -> executor on fake kernels
//   FuzzParams          ReadParamsDict (copying and zero-copy) and GraphExecutor::LoadParams/ShareParams
//   FuzzNpy             ParseNpy -> SerializeNpy round trip
//   FuzzElfInspect      ElfImage::Parse -> FindSymbolData("__tvm_dev_mblob") -> ReadBlobPrefix ->
//                       ParseModuleBlob with a header-only handler (the `sorun inspect` path) and
//                       VerifyBlobChecksum of __sorun_blob_checksum
//   FuzzTar             ReadTarArchive -> TarWriter round trip
//   FuzzElfInject       InjectBlobIntoElfImage (+ the file variant) on a fuzzed library and blob ->
//                       the output passes the ELF preflight and ElfImage, the blob reads back equal
//                       (fuzz_targets_load.cc)
//   FuzzModelLoad       a fuzzed blob spliced into a fixed real kernel library -> a file -> Load ->
//                       CreateExecutor (CPU; never run) -> unload (fuzz_targets_load.cc)
//   FuzzRelax           byte 0 selects a Relax blob generation or a bare VM executable payload ->
//                       ParseLibraryBlob -> ParseVmExecutable -> classification, disassembly, inputs
//                       (fuzz_targets_relax.cc)
//   FuzzRelaxVm         a VM executable payload -> ParseVmExecutable -> VmProgram::Create against the kernel
//                       library of a real TVM export (byte 0 picks which) -> VmExecutor on the CPU, inputs
//                       bound with zeros, Run twice, outputs read (fuzz_targets_relax.cc). Kernels RUN: they
//                       are the export's real code, the bytecode is the data under test
//
// Bad input must come back as a non-OK Status; a body aborts (FUZZ_CHECK) only when a round trip or an
// invariant of a successful parse breaks, which is a bug. Sanitizers catch the rest. The bodies never
// touch the network or a GPU, and only FuzzElfInject / FuzzModelLoad touch the file system (a private
// temporary directory; FuzzModelLoad dlopen()s the libraries it writes there; FuzzRelaxVm dlopen()s the
// fixture exports of testdata/relax once, read-only): OpenCL discovery is pointed at an empty
// vendor directory (OCL_ICD_VENDORS, unless already set) and CUDA_VISIBLE_DEVICES is emptied.
//
// Thread-compatible: a fuzzer calls one body at a time. Every body returns 0 (libFuzzer's contract).
#ifndef SORUN_FUZZ_FUZZ_TARGETS_H_
#define SORUN_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sorun {
namespace fuzz {

using FuzzFunction = int (*)(const uint8_t* data, size_t size);

// One fuzz target: its name (the binary is <name>_fuzzer, its corpus fuzz/corpus/<name>_fuzzer).
struct FuzzTarget {
  const char* name;
  FuzzFunction function;
};

// Every target, in a fixed order.
const std::vector<FuzzTarget>& AllTargets();

int FuzzBlob(const uint8_t* data, size_t size);
int FuzzFactoryPayload(const uint8_t* data, size_t size);
int FuzzDevicePayload(const uint8_t* data, size_t size);
int FuzzGraphJson(const uint8_t* data, size_t size);
int FuzzParams(const uint8_t* data, size_t size);
int FuzzNpy(const uint8_t* data, size_t size);
int FuzzElfInspect(const uint8_t* data, size_t size);
int FuzzTar(const uint8_t* data, size_t size);
int FuzzElfInject(const uint8_t* data, size_t size);
int FuzzModelLoad(const uint8_t* data, size_t size);
int FuzzMemoryLoad(const uint8_t* data, size_t size);
int FuzzRelax(const uint8_t* data, size_t size);
int FuzzRelaxVm(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace sorun

#endif  // SORUN_FUZZ_FUZZ_TARGETS_H_
