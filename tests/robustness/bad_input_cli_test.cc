// Bad-input catalogue, CLI and contract cases: gzip bombs, pack outputs, environment variables, dtypes.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <string>
#include <vector>

#include "tests/robustness/catalogue.h"

namespace sorun {
namespace catalogue {
namespace {

std::vector<CatalogueCase> CliCases() {
  std::vector<CatalogueCase> cases;
  return cases;
}

// GoogleTest allows an empty instantiation only when told so (an area may start empty).
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BadInputCatalogueTest);
SORUN_CATALOGUE_CASES(Cli, CliCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
