#include "tools/cli/compile_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/subprocess.h"

namespace sorun {
namespace cli {
namespace {

std::string PythonInterpreter() {
  const char* env = std::getenv("SORUN_PYTHON");
  return env != nullptr && env[0] != '\0' ? env : "python3";
}

// Runs argv (argv[0] searched in PATH) with the terminal's stdin/stdout/stderr and returns its exit
// status (128 + signal when killed). While it runs, Ctrl-C is left to the child (one process group):
// it stops, says which step it was in, and exits 130.
int RunInheritingTerminal(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  struct sigaction ignore {};
  struct sigaction old_int {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  if (pid < 0) return kExitModelError;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

std::string CompileUsage() {
  return "Usage: sorun compile MODEL.onnx -o OUT.so [--target host|cpu:NAME|cuda[:sm_XX]|aarch64[:CPU]]\n"
         "                     [--input NAME:D1xD2x...]... [--tune BUDGET --database DIR] [--no-check]\n"
         "\n"
         "Compiles an ONNX model into one packed sorun model file with TVM 0.27, optionally tuned with\n"
         "MetaSchedule, checked against ONNX Runtime and TVM's VM before it is written (docs/compile.md).\n"
         "Runs the Python package's compiler: $SORUN_PYTHON (else python3) -m sorun.compile, which needs\n"
         "pip install 'sorun[compile]'. `python -m sorun.compile --help` lists every flag.\n";
}

int RunCompileCommand(const std::vector<std::string>& args, CommandIo& io) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    io.out << CompileUsage();
    return kExitSuccess;
  }
  const std::string python = PythonInterpreter();
  if (Status probe = RunCommand({python, "-c", "import sorun.compile"}); !probe.ok()) {
    io.err << "sorun: error: compile: " << python
           << " cannot import sorun.compile: install the Python package with the compile extra (pip install "
              "'sorun[compile]') and set SORUN_PYTHON to that Python, or put it first on PATH\n";
    return kExitUsageError;
  }
  io.out.flush();
  io.err.flush();
  std::vector<std::string> argv = {python, "-m", "sorun.compile"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunInheritingTerminal(argv);
}

}  // namespace cli
}  // namespace sorun
