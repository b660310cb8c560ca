// TextureShape: TVM's rule for laying a tensor of a "global.texture*" memory scope out as an RGBA
// image2d (TVM's DefaultTextureLayoutSeparator + ApplyTexture2DFlattening, src/runtime/texture.h).
//
// The last dimension is the texel's channels (4 for RGBA); the dimensions before a scope-specific
// separator axis are multiplied into the image height, the ones from it up to the last into the
// width:
//   "global.texture"        separator rank-2   [N,C,H,W,4] -> height N*C*H, width W
//   "global.texture-weight" separator 1        [O,I,H,W,4] -> height O, width I*H*W
//   "global.texture-nhwc"   separator 2 (1 at rank 3)  [N,H,W,C,4] -> height N*H, width W*C
// One implementation, used by the graph executor (sizing texture storage), the Relax VM and the
// OpenCL backend (image copies). Pure functions; thread-safe.
#ifndef SORUN_RUNTIME_TEXTURE_LAYOUT_H_
#define SORUN_RUNTIME_TEXTURE_LAYOUT_H_

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sorun {

struct TextureShape {
  int64_t width = 1;
  int64_t height = 1;
  int64_t channels = 1;  // texel components: the last dimension
};

// True for every scope that names texture memory ("global.texture", "global.texture-weight", ...),
// known or not: TVM's IsTextureStorage.
bool IsTextureScope(std::string_view scope);

// The image2d shape of a tensor of `shape` (`ndim` dims) in `scope`. InvalidArgument naming the
// scope and shape when the scope is not one of the three above, the rank is too small for it, or a
// dimension is negative.
StatusOr<TextureShape> TextureShapeFor(std::string_view scope, const int64_t* shape, int ndim);

}  // namespace sorun

#endif  // SORUN_RUNTIME_TEXTURE_LAYOUT_H_
