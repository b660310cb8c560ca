// The size baseline of embedded/size_report.sh: hello_model.cc's program shape (arguments, stdio, an
// exit status) without sorun, linked the same way, so hello_model minus this is what sorun adds.
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  std::printf("output 0: %s\n", argv[1]);
  return 0;
}
