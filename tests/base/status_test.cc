#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace sorun {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, AnnotateAddsContextOutermostFirst) {
  Status s = DataLoss("byte 12: truncated");
  s.Annotate("__tvm_dev_mblob").Annotate("model.so");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "model.so: __tvm_dev_mblob: byte 12: truncated");
  EXPECT_EQ(s.ToString(), "data_loss: model.so: __tvm_dev_mblob: byte 12: truncated");
}

TEST(StatusTest, AnnotateOnOkIsNoop) {
  Status s;
  s.Annotate("context");
  EXPECT_TRUE(s.ok());
}

TEST(StatusTest, CopyIsDeep) {
  Status a = NotFound("x");
  Status b = a;
  b.Annotate("y");
  EXPECT_EQ(a.message(), "x");
  EXPECT_EQ(b.message(), "y: x");
}

StatusOr<int> Half(int v) {
  if (v % 2) return InvalidArgument(std::to_string(v) + " is odd");
  return v / 2;
}

StatusOr<int> Quarter(int v) {
  SORUN_ASSIGN_OR_RETURN(int h, Half(v));
  SORUN_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusOrTest, PropagatesValueAndError) {
  StatusOr<int> q = Quarter(8);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 2);
  StatusOr<int> bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "3 is odd");
}

TEST(StatusOrTest, HoldsMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(5);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> v = std::move(p).value();
  EXPECT_EQ(*v, 5);
}

TEST(StatusOrTest, OkStatusWithoutValueBecomesInternalError) {
  StatusOr<int> s = Status::Ok();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInternal);
}

TEST(StatusOrDeathTest, DereferencingAnErrorAbortsWithTheStatus) {
  StatusOr<int> bad = InvalidArgument("input 'x' has the wrong shape");
  EXPECT_DEATH((void)*bad, "StatusOr accessed without a value: invalid_argument: input 'x' has the wrong shape");
  EXPECT_DEATH((void)bad.value(), "StatusOr accessed without a value: invalid_argument");
  const StatusOr<int>& cbad = bad;
  EXPECT_DEATH((void)*cbad, "StatusOr accessed without a value");
  EXPECT_DEATH((void)std::move(bad).value(), "StatusOr accessed without a value");
}

TEST(StatusOrDeathTest, ArrowOnAnErrorAbortsWithTheStatus) {
  StatusOr<std::string> bad = NotFound("no function 'f'");
  EXPECT_DEATH((void)bad->size(), "StatusOr accessed without a value: not_found: no function 'f'");
  StatusOr<std::unique_ptr<int>> moved_from = Status::Ok();  // Internal error, no value
  EXPECT_DEATH((void)moved_from->get(), "StatusOr constructed from an OK status without a value");
}

}  // namespace
}  // namespace sorun
