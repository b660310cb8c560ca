// Bad-input catalogue, class 2: blob and checksum symbols that point outside what the library maps.
// Each case runs through BadInputCatalogueTest (tests/robustness/catalogue.h).
#include <string>
#include <vector>

#include "tests/robustness/catalogue.h"

namespace sorun {
namespace catalogue {
namespace {

std::vector<CatalogueCase> ElfCases() {
  std::vector<CatalogueCase> cases;
  return cases;
}

// GoogleTest allows an empty instantiation only when told so (an area may start empty).
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BadInputCatalogueTest);
SORUN_CATALOGUE_CASES(Elf, ElfCases());

}  // namespace
}  // namespace catalogue
}  // namespace sorun
