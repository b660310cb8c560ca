/* A program (not a library): the ELF blob injector must refuse it, as ET_EXEC (-no-pie) and as a
   position-independent executable (ET_DYN with PT_INTERP). */
int main(void) { return 0; }
