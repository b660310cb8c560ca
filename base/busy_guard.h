// BusyGuard: rejects concurrent use of an object that is single-threaded by contract (an executor).
// The object owns a `std::atomic<bool>` busy flag; each public entry point makes a guard on it and
// returns guard.status() when it is not OK (the flag was already set by another thread). The guard
// clears the flag when it goes, if it set it. The refusal message is the caller's. Header-only.
#ifndef SORUN_BASE_BUSY_GUARD_H_
#define SORUN_BASE_BUSY_GUARD_H_

#include <atomic>

#include "base/status.h"

namespace sorun {

class BusyGuard {
 public:
  // `refusal` (a string literal) is the FailedPrecondition message when the flag is taken.
  BusyGuard(std::atomic<bool>& busy, const char* refusal)
      : busy_(busy), refusal_(refusal), acquired_(!busy.exchange(true, std::memory_order_acquire)) {}
  ~BusyGuard() {
    if (acquired_) busy_.store(false, std::memory_order_release);
  }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;

  Status status() const { return acquired_ ? Status::Ok() : FailedPrecondition(refusal_); }

 private:
  std::atomic<bool>& busy_;
  const char* refusal_;
  bool acquired_;
};

}  // namespace sorun

#endif  // SORUN_BASE_BUSY_GUARD_H_
