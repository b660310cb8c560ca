// Small helpers for the RapidJSON writers behind `sorun inspect --json` and `sorun bench --json`:
// strings (made valid UTF-8), shapes and string lists. Header-only; stateless.
#ifndef SORUN_TOOLS_CLI_JSON_UTIL_H_
#define SORUN_TOOLS_CLI_JSON_UTIL_H_

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sorun {
namespace cli {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD, so that
// names read from untrusted files always give valid JSON.
inline std::string ValidUtf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size() && !(len == 2 && c < 0xc2);
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && len == 3) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
    }
    if (ok && len == 4) {
      const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90) && c <= 0xf4;
    }
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

inline void WriteJsonString(JsonWriter& w, const std::string& s) {
  const std::string valid = ValidUtf8(s);
  w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
}

inline void WriteJsonStrings(JsonWriter& w, const std::vector<std::string>& v) {
  w.StartArray();
  for (const std::string& s : v) WriteJsonString(w, s);
  w.EndArray();
}

inline void WriteJsonShape(JsonWriter& w, const std::vector<int64_t>& shape) {
  w.StartArray();
  for (int64_t d : shape) w.Int64(d);
  w.EndArray();
}

inline void WriteJsonU64s(JsonWriter& w, const std::vector<uint64_t>& v) {
  w.StartArray();
  for (uint64_t x : v) w.Uint64(x);
  w.EndArray();
}

}  // namespace cli
}  // namespace sorun

#endif  // SORUN_TOOLS_CLI_JSON_UTIL_H_
