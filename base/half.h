// IEEE 754 half precision (binary16) to float: subnormals, infinities and NaN included. Pure
// function; thread-safe. Used where sorun reads float16 data itself (sorting it, printing it).
#ifndef SORUN_BASE_HALF_H_
#define SORUN_BASE_HALF_H_

#include <cmath>
#include <cstdint>

namespace sorun {

inline float HalfToFloat(uint16_t h) {
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant != 0 ? NAN : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return (h & 0x8000u) != 0 ? -f : f;
}

}  // namespace sorun

#endif  // SORUN_BASE_HALF_H_
