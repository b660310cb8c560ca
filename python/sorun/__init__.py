"""sorun: run a TVM-compiled model shipped as one shared library, from Python.

    import sorun, numpy as np
    model = sorun.load("model.so")
    ex = model.executor(device="cpu")
    out = ex.run(data=np.ones((1, 16), np.float32))   # list of sorun.Tensor (np.asarray / np.from_dlpack)

Everything here is the C++ runtime (api/sorun.h) through the extension module ``sorun._sorun``;
docs/python.md is the guide. Errors are ``sorun.Error`` subclasses carrying the C++ message.
"""

from ._sorun import (  # noqa: F401  (re-exported API)
    AbortedError,
    AlreadyExistsError,
    DataLossError,
    Error,
    Executor,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    Model,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    Tensor,
    TensorInfo,
    UnavailableError,
    UnimplementedError,
    load,
    num_threads,
)
from ._version import __version__  # noqa: F401  (written by python/build_wheel.py)

__all__ = [
    "AbortedError", "AlreadyExistsError", "DataLossError", "Error", "Executor", "FailedPreconditionError",
    "InternalError", "InvalidArgumentError", "Model", "NotFoundError", "OutOfRangeError", "PermissionDeniedError",
    "ResourceExhaustedError", "Tensor", "TensorInfo", "UnavailableError", "UnimplementedError", "load",
    "num_threads", "__version__",
]
