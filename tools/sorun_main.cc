// The `sorun` command-line tool. Everything lives in tools/cli (RunSorunCli); see docs/cli.md.
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli/cli_main.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  sorun::cli::CommandIo io{std::cout, std::cerr};
  int code = sorun::cli::RunSorunCli(args, io);
  std::cout.flush();
  return code;
}
