#include "tools/cli/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sorun {
namespace cli {

LatencyStats SummarizeLatencies(std::vector<double> samples) {
  LatencyStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = (n % 2 == 1) ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = samples[std::min(n, std::max<size_t>(rank, 1)) - 1];
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return s;
}

}  // namespace cli
}  // namespace sorun
