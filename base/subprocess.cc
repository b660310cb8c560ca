#include "base/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

extern char** environ;

namespace sorun {
namespace {

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

std::string Tail(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return "..." + text.substr(text.size() - max_bytes);
}

}  // namespace

std::string CCompiler(const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  const char* cc = std::getenv("CC");
  return cc && *cc ? cc : "cc";
}

std::string CxxCompiler(const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

Status RunCommand(const std::vector<std::string>& argv, std::string* output) {
  if (argv.empty()) return InvalidArgument("RunCommand: empty command");
  // The child's stdout and stderr go into one pipe, drained while it runs (no temporary files).
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Internal(std::string("cannot create a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string log;
  if (rc == 0) {
    char buf[4096];
    for (;;) {
      ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
      if (n > 0) {
        log.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
  }
  close(pipe_fds[0]);
  if (rc != 0) return Unavailable("cannot run '" + argv[0] + "': " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Internal(std::string("waitpid failed: ") + std::strerror(errno));
  }
  if (output) *output = log;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string why = WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                      : "signal " + std::to_string(WTERMSIG(status));
  return Internal("command failed (" + why + "): " + Join(argv) + (log.empty() ? "" : "\n" + Tail(log, 4000)));
}

StatusOr<TempDir> TempDir::Create(const std::string& prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + prefix + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return Unavailable("cannot create a temporary directory " + tmpl + ": " + std::strerror(errno));
  }
  return TempDir(std::string(buf.data()));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace sorun
