// sorun._sorun._relax_blob_object: the export hook of `sorun compile` (python/sorun/compile/blob_export.py)
// packs the blob TVM serialized before TVM links it: the Relax executable's constants realigned
// (packer/relax_pack.h RealignLibraryBlob), the assembler file defining the blob symbol with the checksum
// record (packer/blob_assembly.h). Registered once at import; releases the GIL while it realigns.
#ifndef SORUN_PYTHON_PACK_BINDING_H_
#define SORUN_PYTHON_PACK_BINDING_H_

#include <pybind11/pybind11.h>

namespace sorun::python {

void BindPacker(pybind11::module_& m);

}  // namespace sorun::python

#endif  // SORUN_PYTHON_PACK_BINDING_H_
