// The one exception rule of the C boundaries: a body's own Status passes through unchanged, and an
// escaping exception becomes ResourceExhausted (std::bad_alloc and its subclasses) or Internal (any
// other std::exception, anything else), the message naming the boundary function.
#include "base/call_guarded.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace sorun {
namespace {

TEST(CallGuardedTest, TheBodysStatusPassesThrough) {
  EXPECT_TRUE(CallGuarded("f", [] { return Status::Ok(); }).ok());
  Status s = CallGuarded("f", [] { return NotFound("no such input 'x'"); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no such input 'x'");
}

TEST(CallGuardedTest, BadAllocIsResourceExhausted) {
  Status s = CallGuarded("sorun_model_load", []() -> Status { throw std::bad_alloc(); });
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "sorun_model_load: out of memory (std::bad_alloc)");
  // A subclass counts as running out of memory too.
  Status array = CallGuarded("f", []() -> Status { throw std::bad_array_new_length(); });
  EXPECT_EQ(array.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(array.message().rfind("f: out of memory (", 0), 0u) << array.message();
}

TEST(CallGuardedTest, OtherExceptionsAreInternalWithTheirText) {
  Status s = CallGuarded("TVMFuncCall", []() -> Status { throw std::runtime_error("the kernel table is gone"); });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "TVMFuncCall: C++ exception: the kernel table is gone");
  Status grown = CallGuarded("f", []() -> Status {
    std::string text;
    text.resize(text.max_size() + 1);  // std::length_error
    return Status::Ok();
  });
  EXPECT_EQ(grown.code(), StatusCode::kInternal);
  EXPECT_EQ(grown.message().rfind("f: C++ exception: ", 0), 0u) << grown.message();
}

TEST(CallGuardedTest, AnythingElseIsInternalOfUnknownType) {
  Status s = CallGuarded("TRITONBACKEND_ModelInitialize", []() -> Status { throw 42; });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "TRITONBACKEND_ModelInitialize: C++ exception of unknown type");
}

TEST(CallGuardedTest, ExceptionStatusIsTheSameRule) {
  const std::bad_alloc oom;
  EXPECT_EQ(ExceptionStatus("g", &oom).message(), "g: out of memory (std::bad_alloc)");
  const std::invalid_argument bad("bad");
  EXPECT_EQ(ExceptionStatus("g", &bad).code(), StatusCode::kInternal);
  EXPECT_EQ(ExceptionStatus("g", &bad).message(), "g: C++ exception: bad");
  EXPECT_EQ(ExceptionStatus("g", nullptr).message(), "g: C++ exception of unknown type");
}

}  // namespace
}  // namespace sorun
