// LatencyStats: summary of a list of run times for `sorun bench`: min, median (mean of the two middle
// values for an even count), p90 (nearest rank: the ceil(0.9 n)-th smallest), max and mean. Pure.
#ifndef SORUN_TOOLS_CLI_LATENCY_STATS_H_
#define SORUN_TOOLS_CLI_LATENCY_STATS_H_

#include <vector>

namespace sorun {
namespace cli {

struct LatencyStats {
  double min = 0;
  double median = 0;
  double p90 = 0;
  double max = 0;
  double mean = 0;
};

// All zeros for an empty list.
LatencyStats SummarizeLatencies(std::vector<double> samples);

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_LATENCY_STATS_H_
