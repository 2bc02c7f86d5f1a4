// libFuzzer's entry points (compiler-rt's FuzzerInterface.h, FuzzerDriver.cpp), linked in by
// -sanitize=fuzzer. LLVMFuzzerTestOneInput is each fuzz target's own (its @_cdecl function).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test)(const uint8_t *data, size_t size));
