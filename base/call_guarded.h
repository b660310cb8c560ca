// CallGuarded: the one rule for a C++ exception that reaches a C boundary. sorun code throws nothing
// (docs/architecture.md, "Error model"), but the C++ library does (std::bad_alloc, std::length_error
// from a growing string) and so may code sorun calls (a C++ packed function). Every boundary runs its
// body through CallGuarded, which turns an escaping exception into a Status:
//   std::bad_alloc (and subclasses)  ResourceExhausted  "<function>: out of memory (<what()>)"
//   any other std::exception         Internal           "<function>: C++ exception: <what()>"
//   anything else                    Internal           "<function>: C++ exception of unknown type"
// and then converts that Status into its own error representation: the C API (api/sorun_c.cc: a
// sorun_status_t and sorun_last_error()), the TVM C ABI (GuardCBoundary, runtime/packed_func.h: -1
// and TVMGetLastError()) and the Triton backend (serving/triton/backend.cc: a TRITONSERVER_Error).
//
// Without C++ exceptions (-fno-exceptions: the static core of docs/embedded.md) nothing can escape,
// so CallGuarded calls straight through and ExceptionStatus does not exist: there, as everywhere in such
// a program, a failed allocation aborts (operator new cannot report it), which is the one behaviour that
// differs from the normal build.
//
// Public (//base:call_guarded is visible to everyone, like //base:status): the Triton backend builds
// on public targets only. Stateless; thread-safe.
#ifndef SORUN_BASE_CALL_GUARDED_H_
#define SORUN_BASE_CALL_GUARDED_H_

#include <exception>
#include <utility>

#include "base/status.h"

namespace sorun {

#if __cpp_exceptions
// The Status for exception `e` (null: not a std::exception) caught at the boundary `function`, as in
// the table above. If there is no memory for that message, the same code with "<function>: C++
// exception"; throws std::bad_alloc only when not even that Status can be allocated.
Status ExceptionStatus(const char* function, const std::exception* e);

// Returns body()'s Status (body: a callable returning Status), or ExceptionStatus for an exception it
// throws. Throws nothing but std::bad_alloc, and that only when not even the error Status (a few dozen
// bytes) can be allocated: a boundary that must not throw converts the result inside a catch-all of its
// own, which it needs anyway (its conversion allocates too).
template <typename F>
Status CallGuarded(const char* function, F&& body) {
  try {
    return std::forward<F>(body)();
  } catch (const std::exception& e) {
    return ExceptionStatus(function, &e);
  } catch (...) {
    return ExceptionStatus(function, nullptr);
  }
}
#else
template <typename F>
Status CallGuarded(const char*, F&& body) {
  return std::forward<F>(body)();
}
#endif

}  // namespace sorun

#endif  // SORUN_BASE_CALL_GUARDED_H_
