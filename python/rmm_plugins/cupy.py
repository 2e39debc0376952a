"""CuPy: route CuPy's device allocations through librmm_c (CFunctionAllocator).

    from rmm_plugins.cupy import use_rmm, stats
    use_rmm("pool", initial_size="1GB")
"""
from __future__ import annotations

import ctypes
from typing import Optional

from . import Size, configure, library_path, release, reset_peak, stats

__all__ = ["use_rmm", "stats", "reset_peak", "release"]


def use_rmm(resource: str = "pool", initial_size: Size = None, maximum_size: Size = None,
            library: Optional[str] = None):
    """Makes CuPy allocate device memory with ``resource`` (see ``rmm_plugins.torch.use_rmm``).

    Call it before CuPy's first allocation: librmm_c's configuration is fixed at its first
    allocation, and memory CuPy's previous allocator handed out stays with that allocator.
    Allocations are ordered on the legacy default stream (CuPy does not pass its stream to a
    CFunctionAllocator); see docs/c-library.md. Returns the CFunctionAllocator.
    """
    import cupy

    path = library_path(library)
    lib = configure(resource, initial_size, maximum_size, path)
    malloc = ctypes.cast(lib.rmm_c_cupy_malloc, ctypes.c_void_p).value
    free = ctypes.cast(lib.rmm_c_cupy_free, ctypes.c_void_p).value
    # param is unused by librmm_c; owner keeps the library loaded as long as the allocator lives.
    allocator = cupy.cuda.memory.CFunctionAllocator(0, malloc, free, lib)
    cupy.cuda.set_allocator(allocator.malloc)
    return allocator
