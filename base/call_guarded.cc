#include "base/call_guarded.h"

#include <new>
#include <string>

namespace sorun {

#if __cpp_exceptions  // without exceptions there is nothing to convert (call_guarded.h)

Status ExceptionStatus(const char* function, const std::exception* e) {
#if __cpp_rtti
  const bool out_of_memory = e != nullptr && dynamic_cast<const std::bad_alloc*>(e) != nullptr;
#else  // exceptions without RTTI: not a build sorun makes; bad_alloc is then reported as Internal
  const bool out_of_memory = false;
#endif
  const StatusCode code = out_of_memory ? StatusCode::kResourceExhausted : StatusCode::kInternal;
  try {
    std::string message = std::string(function) + ": ";
    if (e == nullptr) {
      message += "C++ exception of unknown type";
    } else if (out_of_memory) {
      message += std::string("out of memory (") + e->what() + ")";
    } else {
      message += std::string("C++ exception: ") + e->what();
    }
    return Status(code, std::move(message));
  } catch (...) {  // no memory for the message
    return Status(code, std::string(function) + ": C++ exception");
  }
}
#endif  // __cpp_exceptions

}  // namespace sorun
