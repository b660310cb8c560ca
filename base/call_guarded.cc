#include "base/call_guarded.h"

#include <new>
#include <string>

namespace sorun {

Status ExceptionStatus(const char* function, const std::exception* e) {
  const bool out_of_memory = e != nullptr && dynamic_cast<const std::bad_alloc*>(e) != nullptr;
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

}  // namespace sorun
