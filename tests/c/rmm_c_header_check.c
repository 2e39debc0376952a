/* include/rmm/c/rmm_c.h must compile as C99 (-pedantic -Werror): no C++ in the public header. */
#include <rmm/c/rmm_c.h>

/* Each entry point has the signature its consumer expects (PyTorch, CuPy). */
typedef void* (*rmm_c_check_torch_alloc)(ssize_t, int, rmm_c_stream_t);
typedef void (*rmm_c_check_torch_free)(void*, ssize_t, int, rmm_c_stream_t);
typedef intptr_t (*rmm_c_check_cupy_malloc)(intptr_t, size_t, int);
typedef void (*rmm_c_check_cupy_free)(intptr_t, intptr_t, int);

/** @brief Referenced by rmm_c_config_tests.cpp so that this object is linked and checked. */
int rmm_c_header_check_c(void);

int rmm_c_header_check_c(void) {
  rmm_c_check_torch_alloc alloc_fn   = rmm_c_alloc;
  rmm_c_check_torch_free free_fn     = rmm_c_free;
  rmm_c_check_cupy_malloc malloc_fn  = rmm_c_cupy_malloc;
  rmm_c_check_cupy_free cupy_free_fn = rmm_c_cupy_free;
  rmm_c_stats stats;
  stats.bytes_in_use = 0;
  return (alloc_fn != 0) + (free_fn != 0) + (malloc_fn != 0) + (cupy_free_fn != 0) +
         (int)stats.bytes_in_use;
}
