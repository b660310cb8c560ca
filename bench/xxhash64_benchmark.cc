// Throughput of XXH64 (the blob checksum): one-shot and streaming in 1 MiB chunks, on buffers from
// 4 KiB to 256 MiB. Run: bazel run -c opt //bench:xxhash64_benchmark
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "base/xxhash64.h"

namespace sorun {
namespace {

const std::vector<uint8_t>& Buffer(size_t size) {
  static std::vector<uint8_t> buffer;
  if (buffer.size() < size) {
    std::mt19937_64 rng(1);
    buffer.resize(size);
    for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  }
  return buffer;
}

void BM_Xxh64OneShot(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const std::vector<uint8_t>& data = Buffer(size);
  for (auto _ : state) benchmark::DoNotOptimize(Xxh64(data.data(), size));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
}
BENCHMARK(BM_Xxh64OneShot)->Arg(4 << 10)->Arg(1 << 20)->Arg(256 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Xxh64Streaming1MiB(benchmark::State& state) {
  const size_t size = static_cast<size_t>(state.range(0));
  const size_t chunk = 1 << 20;
  const std::vector<uint8_t>& data = Buffer(size);
  for (auto _ : state) {
    Xxh64Stream stream;
    for (size_t pos = 0; pos < size; pos += chunk) stream.Update(data.data() + pos, std::min(chunk, size - pos));
    benchmark::DoNotOptimize(stream.Digest());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(size));
}
BENCHMARK(BM_Xxh64Streaming1MiB)->Arg(256 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sorun

BENCHMARK_MAIN();
