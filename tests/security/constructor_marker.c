/* Host code packed into //tests/security:marker_mlp beside the zoo MLP's kernels: its constructor
 * runs when the library is dlopen()ed and creates the file named by CONSTRUCTOR_MARKER_FILE. The
 * marker tests (model_signature_constructor_marker_test.cc) prove with it that a refused library never ran. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void sorun_test_write_constructor_marker(void) {
  const char* path = getenv("CONSTRUCTOR_MARKER_FILE");
  if (path == NULL || path[0] == '\0') return;
  FILE* f = fopen(path, "a");
  if (f == NULL) return;
  fputs("constructor ran\n", f);
  fclose(f);
}
