// sorun._sorun._pack_relax_export: `sorun pack IN.so OUT.so` for a Relax VM export, for `sorun compile`
// (python/sorun/compile/), which packs what TVM exported before it writes its output. Registered once
// at import; the function releases the GIL while it reads and writes files.
#ifndef SORUN_PYTHON_PACK_BINDING_H_
#define SORUN_PYTHON_PACK_BINDING_H_

#include <pybind11/pybind11.h>

namespace sorun::python {

void BindPacker(pybind11::module_& m);

}  // namespace sorun::python

#endif  // SORUN_PYTHON_PACK_BINDING_H_
