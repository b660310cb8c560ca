// Assertions on sorun::Status for tests: EXPECT_ERROR(expr, code, "part", ...) checks that `expr`
// fails with `code` and that its message names every given part (what is wrong and where).
#ifndef SORUN_TESTS_UTIL_STATUS_MATCHERS_H_
#define SORUN_TESTS_UTIL_STATUS_MATCHERS_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace sorun {
namespace testing {

inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace testing
}  // namespace sorun

#define EXPECT_ERROR(expr, code_, ...)                                       \
  do {                                                                       \
    const ::sorun::Status status_ = (expr);                                  \
    ASSERT_FALSE(status_.ok()) << #expr << " unexpectedly succeeded";        \
    EXPECT_EQ(status_.code(), code_) << status_.ToString();                  \
    for (const std::string& part_ : std::vector<std::string>{__VA_ARGS__}) { \
      EXPECT_TRUE(::sorun::testing::Contains(status_.message(), part_))      \
          << "'" << part_ << "' missing in: " << status_.message();          \
    }                                                                        \
  } while (0)

#endif  // SORUN_TESTS_UTIL_STATUS_MATCHERS_H_
