#include "runtime/texture_layout.h"

#include <string>

namespace sorun {
namespace {

std::string ShapeString(const int64_t* shape, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

bool IsTextureScope(std::string_view scope) { return scope.find("texture") != std::string_view::npos; }

StatusOr<TextureShape> TextureShapeFor(std::string_view scope, const int64_t* shape, int ndim) {
  const std::string what =
      "a tensor of shape " + ShapeString(shape, ndim) + " in memory scope '" + std::string(scope) + "'";
  int separator = 0;
  int min_rank = 2;
  if (scope == "global.texture") {
    separator = ndim - 2;
  } else if (scope == "global.texture-weight") {
    separator = 1;
  } else if (scope == "global.texture-nhwc") {
    separator = ndim == 3 ? 1 : 2;
    min_rank = 3;
  } else {
    return InvalidArgument(what +
                           ": unknown texture scope (known: global.texture, global.texture-weight, "
                           "global.texture-nhwc)");
  }
  if (ndim < min_rank) {
    return InvalidArgument(what + ": texture memory needs at least " + std::to_string(min_rank) + " dimensions");
  }
  TextureShape t;
  t.channels = shape[ndim - 1];
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return InvalidArgument(what + ": dimension " + std::to_string(i) + " is negative");
    if (i == ndim - 1) break;
    int64_t& side = i < separator ? t.height : t.width;
    if (shape[i] != 0 && side > INT64_MAX / shape[i]) return InvalidArgument(what + ": the image size overflows");
    side *= shape[i];
  }
  return t;
}

}  // namespace sorun
