"""The export hook of `sorun compile`: TVM's `export_library(..., fpack_imports=...)` with the blob written
the way sorun would pack it. TVM serializes the module tree (`runtime.ModulePackImportsToTensor`: the blob
symbol's bytes, length prefix included), an optional transform rewrites it (cuda: the source payload
compiled to a fatbin), sorun's Relax packer realigns the executable's tensor constants to 64 bytes, and an
assembler file defines the blob symbol (64-byte aligned) with sorun's checksum record beside it. The linked
library then holds ONE blob, already packed: packing TVM's ordinary export afterwards would keep TVM's blob
in the file, unreferenced, beside the packed one (twice the weights on disk)."""
import os

from .errors import CompileError


class BlobPacker:
    """An `fpack_imports` callable for `export_library`; `report` holds what the last call packed (the
    realignment counts and blob sizes), for the compile report."""

    def __init__(self, x86_64, transform=None):
        self.x86_64, self.transform, self.report = x86_64, transform, None

    def __call__(self, module, is_system_lib, prefix, workspace_dir):
        import tvm  # pylint: disable=import-outside-toplevel

        from sorun import _sorun  # pylint: disable=import-outside-toplevel

        if is_system_lib:
            raise CompileError("export", "a system-lib build has no blob symbol to pack (sorun compile writes "
                                         "shared libraries)")
        blob = tvm.get_global_func("runtime.ModulePackImportsToTensor")(module).numpy().tobytes()
        symbol = prefix + tvm.get_global_func("runtime.ModuleImportsBlobName")()
        if self.transform is not None:
            blob = self.transform(blob)
        blob_path = os.path.join(workspace_dir, "sorun_blob.bin")
        try:
            r = _sorun._relax_blob_object(blob, symbol, blob_path, self.x86_64, True)  # pylint: disable=protected-access
        except Exception as e:  # sorun.Error: the packer's message names what is wrong in the container
            raise CompileError("pack", "%s: %s" % (symbol, e)) from None
        with open(blob_path, "wb") as f:
            f.write(r.pop("blob"))
        path = os.path.join(workspace_dir, prefix + "devc.S")
        with open(path, "w") as f:
            f.write(r.pop("assembly"))
        self.report = dict(r, blob_symbol=symbol)
        return path
