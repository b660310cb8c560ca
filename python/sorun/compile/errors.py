"""The one error type of `sorun compile`: a message naming the operator, tool, file or step that failed."""


class CompileError(Exception):
    """`sorun compile` failed; str(e) says what and where (never a TVM stack trace).

    step: the step that failed ("onnx", "toolchain", "import", "tune", "build", "export", "pack", "check",
    "output"); the CLI prints "sorun compile: <step>: <message>" and exits with status 2.
    """

    def __init__(self, step, message):
        super().__init__(message)
        self.step = step


def last_line(exc):
    """The last non-empty line of an exception's text: TVM's errors end with the sentence that matters,
    after a C++ and Python stack trace."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
