// tools/cli/chrome_trace.h: the Trace Event Format written from Executor::Trace's events.
#include "tools/cli/chrome_trace.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace sorun {
namespace cli {
namespace {

TEST(ChromeTraceTest, RunsFollowOneAnotherAndKernelsLieInsideTheirRun) {
  TracedRuns traced;
  traced.process_name = "sorun m.so on cpu:0";
  // Two runs whose event times start where Executor::Trace's clock was (not at 0).
  traced.runs.push_back({KernelEvent{3, "fc1", "dense", 100, 5}, KernelEvent{4, "relu", "relu\xff", 106, 2}});
  traced.runs.push_back({KernelEvent{3, "fc1", "dense", 500, 4}, KernelEvent{4, "relu", "relu", 505, 3}});
  rapidjson::Document doc;
  doc.Parse(ChromeTraceJson(traced).c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["displayTimeUnit"].GetString(), "ms");
  const auto& events = doc["traceEvents"];
  ASSERT_EQ(events.Size(), 2u + 2u + 4u);  // 2 metadata, 2 runs, 4 kernels
  EXPECT_STREQ(events[0]["ph"].GetString(), "M");
  EXPECT_STREQ(events[0]["args"]["name"].GetString(), "sorun m.so on cpu:0");
  // Run 0 starts at 0 and lasts from its first kernel's start to its last kernel's end.
  EXPECT_STREQ(events[2]["cat"].GetString(), "run");
  EXPECT_EQ(events[2]["ts"].GetDouble(), 0.0);
  EXPECT_EQ(events[2]["dur"].GetDouble(), 8.0);
  EXPECT_EQ(events[2]["args"]["kernel_calls"].GetUint(), 2u);
  EXPECT_STREQ(events[3]["name"].GetString(), "fc1");
  EXPECT_EQ(events[3]["ts"].GetDouble(), 0.0);
  EXPECT_EQ(events[3]["dur"].GetDouble(), 5.0);
  EXPECT_EQ(events[3]["args"]["node_id"].GetUint(), 3u);
  EXPECT_EQ(events[4]["ts"].GetDouble(), 6.0);
  EXPECT_STREQ(events[4]["args"]["kernel"].GetString(), "relu\xEF\xBF\xBD");  // made valid UTF-8
  // Run 1 follows run 0 (after a 1 us gap), its kernels shifted with it.
  EXPECT_EQ(events[5]["ts"].GetDouble(), 9.0);
  EXPECT_EQ(events[5]["dur"].GetDouble(), 8.0);
  EXPECT_EQ(events[6]["ts"].GetDouble(), 9.0);
  EXPECT_EQ(events[7]["ts"].GetDouble(), 14.0);
  for (rapidjson::SizeType i = 2; i < events.Size(); ++i) {
    EXPECT_STREQ(events[i]["ph"].GetString(), "X");
    EXPECT_EQ(events[i]["pid"].GetInt(), 1);
    EXPECT_EQ(events[i]["tid"].GetInt(), 1);
  }
}

TEST(ChromeTraceTest, NoRunsIsAnEmptyTimeline) {
  rapidjson::Document doc;
  doc.Parse(ChromeTraceJson(TracedRuns{"p", {}}).c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(doc["traceEvents"].Size(), 2u);  // the track names only
}

}  // namespace
}  // namespace cli
}  // namespace sorun
