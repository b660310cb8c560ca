#include "python/pack_binding.h"

#include <string>

#include "packer/blob_assembly.h"
#include "packer/relax_pack.h"
#include "python/py_support.h"
#include "serialization/blob_checksum.h"

namespace sorun::python {

void BindPacker(py::module_& m) {
  m.def(
      "_relax_blob_object",
      [](const py::bytes& symbol_bytes, const std::string& symbol, const std::string& blob_path, bool x86_64,
         bool checksum) {
        std::string in = symbol_bytes;
        relax::RealignedBlob r;
        std::string record;
        {
          py::gil_scoped_release release;
          r = Value(relax::RealignLibraryBlob(reinterpret_cast<const uint8_t*>(in.data()), in.size(), symbol));
          if (checksum) record = MakeBlobChecksumRecord(r.blob);
        }
        BlobAssemblyOptions options;
        options.symbol = symbol;
        options.x86_64 = x86_64;
        py::dict out;
        out["blob"] = py::bytes(r.blob);
        out["assembly"] = BlobAssembly(blob_path, r.blob.size(), record, options);
        out["old_blob_bytes"] = in.size();
        out["new_blob_bytes"] = r.blob.size();
        out["tensor_constants"] = r.report.tensor_constants;
        out["aligned_before"] = r.report.aligned_before;
        out["aligned_after"] = r.report.aligned_after;
        out["checksum"] = checksum;
        return out;
      },
      py::arg("symbol_bytes"), py::arg("symbol"), py::arg("blob_path"), py::arg("x86_64"), py::arg("checksum") = true,
      "Private, for sorun.compile's export hook: the blob symbol's bytes (TVM's ModulePackImportsToTensor) with the "
      "Relax executable's tensor constants realigned to 64 bytes, and the assembly that defines `symbol` from "
      "`blob_path` (where the caller writes `blob`), 64-byte aligned, plus the checksum record: one blob in the "
      "linked library, not TVM's and a packed copy.");
}

}  // namespace sorun::python
