// executor/kernel_timer.h: per-site statistics (Profile) and the call timeline (Trace).
#include "executor/kernel_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace sorun {
namespace {

TEST(KernelTimerTest, ProfilesEachSiteInFirstCallOrder) {
  KernelTimer timer({DLDevice{kDLCPU, 0}}, /*record_events=*/false);
  auto sleep_us = [](int us) {
    return [us] {
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      return Status::Ok();
    };
  };
  ASSERT_TRUE(timer.Time(7, "b", "kb", sleep_us(200)).ok());
  ASSERT_TRUE(timer.Time(3, "a", "ka", sleep_us(100)).ok());
  ASSERT_TRUE(timer.Time(7, "b", "kb", sleep_us(1000)).ok());
  std::vector<NodeProfile> p = timer.Profile();
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].node_id, 7u);
  EXPECT_EQ(p[0].name, "b");
  EXPECT_EQ(p[0].func_name, "kb");
  EXPECT_GE(p[0].min_us, 200.0);
  EXPECT_LT(p[0].min_us, p[0].mean_us);  // mean of 200+ and 1000+ us
  EXPECT_GE(p[0].mean_us, 600.0);
  EXPECT_EQ(p[1].node_id, 3u);
  EXPECT_GE(p[1].min_us, 100.0);
  EXPECT_EQ(p[1].min_us, p[1].mean_us);  // one call
  EXPECT_TRUE(timer.Events().empty()) << "events are kept only when asked";
}

TEST(KernelTimerTest, TraceKeepsEveryCallInOrderOnOneClock) {
  KernelTimer timer({DLDevice{kDLCPU, 0}}, /*record_events=*/true);
  for (uint32_t site : {1u, 2u, 1u}) {
    ASSERT_TRUE(timer.Time(site, "s" + std::to_string(site), "k", [] { return Status::Ok(); }).ok());
  }
  std::vector<KernelEvent> e = timer.Events();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].node_id, 1u);
  EXPECT_EQ(e[1].node_id, 2u);
  EXPECT_EQ(e[2].name, "s1");
  for (size_t i = 0; i < e.size(); ++i) {
    EXPECT_GE(e[i].start_us, 0.0);
    EXPECT_GE(e[i].duration_us, 0.0);
    if (i > 0) {
      EXPECT_GE(e[i].start_us, e[i - 1].start_us + e[i - 1].duration_us);
    }
  }
}

TEST(KernelTimerTest, AFailingCallIsReturnedAndNotRecorded) {
  KernelTimer timer({DLDevice{kDLCPU, 0}}, /*record_events=*/true);
  Status s = timer.Time(5, "bad", "k", [] { return InvalidArgument("kernel said no"); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "kernel said no");
  EXPECT_TRUE(timer.Profile().empty());
  EXPECT_TRUE(timer.Events().empty());
}

TEST(KernelTimerTest, AnAbsentDeviceIsAnErrorBeforeTheCall) {
  KernelTimer timer({DLDevice{kDLCPU, 0}, DLDevice{kDLExtDev, 0}}, /*record_events=*/false);
  bool called = false;
  Status s = timer.Time(1, "n", "k", [&] {
    called = true;
    return Status::Ok();
  });
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace sorun
