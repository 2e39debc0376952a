"""PyTorch: route torch's CUDA allocations through librmm_c (CUDAPluggableAllocator).

    from rmm_plugins.torch import use_rmm, stats
    use_rmm("expandable")          # before the first CUDA allocation of the process
    ...
    print(stats()["peak_reserved_bytes"])
"""
from __future__ import annotations

from typing import Optional

from . import Size, configure, library_path, release, reset_peak, stats

__all__ = ["use_rmm", "stats", "reset_peak", "release"]


def use_rmm(resource: str = "pool", initial_size: Size = None, maximum_size: Size = None,
            library: Optional[str] = None):
    """Makes PyTorch allocate CUDA memory with ``resource`` ("cuda", "cuda_async", "pool",
    "expandable", "arena", "binning"); sizes as for ``rmm_plugins.configure``.

    Must run before the process' first CUDA allocation through torch (PyTorch cannot switch
    allocators afterwards, and neither can librmm_c change its configuration). torch's own
    memory statistics (``torch.cuda.memory_stats``, ``max_memory_reserved``) do not cover a
    pluggable allocator: use ``stats()``. Returns the CUDAPluggableAllocator.
    """
    import torch

    path = library_path(library)
    configure(resource, initial_size, maximum_size, path)  # same handle torch's dlopen gets
    allocator = torch.cuda.memory.CUDAPluggableAllocator(path, "rmm_c_alloc", "rmm_c_free")
    torch.cuda.memory.change_current_allocator(allocator)
    return allocator
