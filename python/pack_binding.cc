#include "python/pack_binding.h"

#include <string>

#include "packer/relax_pack.h"
#include "python/py_support.h"

namespace sorun::python {

void BindPacker(py::module_& m) {
  m.def(
      "_pack_relax_export",
      [](const std::string& input, const std::string& output, bool checksum) {
        relax::RelaxPackOptions options;
        options.checksum = checksum;
        relax::RelaxPackReport r;
        {
          py::gil_scoped_release release;
          r = Value(relax::PackRelaxLibrary(input, output, options));
        }
        py::dict out;
        out["blob_symbol"] = r.blob_symbol;
        out["old_blob_bytes"] = r.old_blob_bytes;
        out["new_blob_bytes"] = r.new_blob_bytes;
        out["output_bytes"] = r.output_bytes;
        out["tensor_constants"] = r.realign.tensor_constants;
        out["aligned_before"] = r.realign.aligned_before;
        out["aligned_after"] = r.realign.aligned_after;
        out["checksum"] = !r.checksum_record.empty();
        return out;
      },
      py::arg("input"), py::arg("output"), py::arg("checksum") = true,
      "Private, for sorun.compile: `sorun pack INPUT OUTPUT` of a Relax VM export (TVM 0.22+ container): its "
      "tensor constants realigned to 64 bytes and the checksum record added. Returns the pack report.");
}

}  // namespace sorun::python
