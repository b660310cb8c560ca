"""`sorun compile`: an ONNX model in, one packed sorun model file out, built by TVM 0.27 for the host CPU, a
named CPU, an NVIDIA GPU or 64-bit Arm, optionally tuned with MetaSchedule (docs/compile.md).

    python -m sorun.compile model.onnx --target host -o model.so
    sorun-compile model.onnx --target cuda:sm_90 -o model_cuda.so

Needs the 'compile' extra (pip install 'sorun[compile]': apache-tvm 0.27, onnx, onnxruntime; CPython 3.10 to
3.13). Nothing here is imported by `import sorun`.
"""
from .compiler import compile_onnx
from .errors import CompileError

__all__ = ["compile_onnx", "CompileError"]
