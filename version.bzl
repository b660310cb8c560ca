"""sorun's version: the one source of the version string.

api/BUILD.bazel compiles it into sorun::Version() (and so `sorun --version`, sorun_version() of the C
API and the Triton backend's log line); python/BUILD.bazel names the wheel and writes its metadata and
sorun.__version__ from it.
"""

SORUN_VERSION = "0.1.0"
