// Build: gcc -O2 -shared -fPIC -o libcuda.so.1 fake_libcuda.c; run the model with its folder first in
// LD_LIBRARY_PATH (CCCL reaches the driver through dlopen("libcuda.so.1") and cuGetProcAddress_v2).
// A fake libcuda.so.1 for host models: every driver entry point succeeds and does nothing.
#include <string.h>
static int ok(void) { return 0; }
int cuGetProcAddress_v2(const char* symbol, void** pfn, int v, unsigned long long flags, int* status) {
  (void)symbol; (void)v; (void)flags;
  *pfn = (void*)&ok;
  if (status) *status = 0;
  return 0;
}
int cuInit(unsigned int f) { (void)f; return 0; }
