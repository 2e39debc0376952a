"""Our memory resources inside PyTorch and CuPy, through librmm_c (include/rmm/c/rmm_c.h).

``rmm_plugins.torch.use_rmm()`` and ``rmm_plugins.cupy.use_rmm()`` install the allocator; this
module loads the library, configures it and reads its statistics (see docs/c-library.md).

The library is ``RMM_C_LIBRARY`` if set, else ``librmm_c.so`` next to this package (in the package
directory or its parent), else the build trees ``build*/librmm_c.so`` of this repository.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Optional, Union

__all__ = ["Stats", "library_path", "load", "configure", "stats", "reset_peak", "release"]

Size = Union[int, str, None]


class Stats(ctypes.Structure):
    """``rmm_c_stats``: byte counters of the C library (see rmm_c.h)."""

    _fields_ = [
        ("bytes_in_use", ctypes.c_size_t),
        ("peak_bytes_in_use", ctypes.c_size_t),
        ("reserved_bytes", ctypes.c_size_t),
        ("peak_reserved_bytes", ctypes.c_size_t),
        ("allocations", ctypes.c_uint64),
        ("failed_allocations", ctypes.c_uint64),
    ]


_loaded: dict = {}


def library_path(library: Optional[str] = None) -> str:
    """The absolute path of librmm_c.so: ``library``, ``$RMM_C_LIBRARY``, or found near here.

    Raises FileNotFoundError naming the places looked at if there is none.
    """
    if library is None:
        library = os.environ.get("RMM_C_LIBRARY") or None
    if library is not None:
        path = Path(library).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"librmm_c: {path} does not exist (library= or RMM_C_LIBRARY)")
        return str(path)
    here = Path(__file__).resolve().parent
    candidates = [here / "librmm_c.so", here.parent / "librmm_c.so"]
    candidates += sorted(here.parent.parent.glob("build*/librmm_c.so"))
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(
        "librmm_c.so not found: set RMM_C_LIBRARY or pass library=; looked at "
        + ", ".join(str(c) for c in candidates))


def load(library: Optional[str] = None) -> ctypes.CDLL:
    """Loads librmm_c once per path and declares its functions' types. Thread-safe enough for
    start-up use (a second load of the same path returns the same handle)."""
    path = library_path(library)
    lib = _loaded.get(path)
    if lib is not None:
        return lib
    lib = ctypes.CDLL(path)
    lib.rmm_c_configure.argtypes = [ctypes.c_char_p] * 3
    lib.rmm_c_configure.restype = ctypes.c_int
    lib.rmm_c_last_error.argtypes = []
    lib.rmm_c_last_error.restype = ctypes.c_char_p
    lib.rmm_c_get_stats.argtypes = [ctypes.c_int, ctypes.POINTER(Stats)]
    lib.rmm_c_get_stats.restype = ctypes.c_int
    lib.rmm_c_reset_peak.argtypes = []
    lib.rmm_c_reset_peak.restype = None
    lib.rmm_c_release.argtypes = []
    lib.rmm_c_release.restype = ctypes.c_int
    lib.rmm_c_flush_log.argtypes = []
    lib.rmm_c_flush_log.restype = ctypes.c_int
    lib.rmm_c_resource_name.argtypes = []
    lib.rmm_c_resource_name.restype = ctypes.c_char_p
    _loaded[path] = lib
    return lib


def _size_text(size: Size) -> Optional[bytes]:
    if size is None:
        return None
    if isinstance(size, int):
        if size < 0:
            raise ValueError(f"librmm_c: negative size {size}")
        return f"{size}B".encode()
    return str(size).encode()


def _error(lib: ctypes.CDLL) -> str:
    return (lib.rmm_c_last_error() or b"").decode(errors="replace")


def configure(resource: str = "pool", initial_size: Size = None, maximum_size: Size = None,
              library: Optional[str] = None) -> ctypes.CDLL:
    """Calls ``rmm_c_configure``: must precede the first allocation.

    Sizes are bytes (int) or strings ("1GB", "512 MB", "50%"). Raises ValueError with the
    library's message if a value is invalid or the library has already allocated.
    """
    lib = load(library)
    if lib.rmm_c_configure(resource.encode(), _size_text(initial_size),
                           _size_text(maximum_size)) != 0:
        raise ValueError(_error(lib))
    return lib


def stats(device: int = -1, library: Optional[str] = None) -> dict:
    """The library's counters as a dict (``device=-1``: summed over devices)."""
    lib = load(library)
    out = Stats()
    if lib.rmm_c_get_stats(device, ctypes.byref(out)) != 0:
        raise RuntimeError(_error(lib))
    result = {name: getattr(out, name) for name, _ in Stats._fields_}
    name = lib.rmm_c_resource_name()
    result["resource"] = name.decode() if name else None
    return result


def reset_peak(library: Optional[str] = None) -> None:
    """Resets the peaks to the current values (``rmm_c_reset_peak``)."""
    load(library).rmm_c_reset_peak()


def flush_log(library: Optional[str] = None) -> None:
    """Writes out the allocation logs of ``RMM_C_LOG`` (``rmm_c_flush_log``); also done at exit."""
    lib = load(library)
    if lib.rmm_c_flush_log() != 0:
        raise RuntimeError(_error(lib))


def release(library: Optional[str] = None) -> None:
    """Gives free pool memory back to the device (``rmm_c_release``)."""
    lib = load(library)
    if lib.rmm_c_release() != 0:
        raise RuntimeError(_error(lib))
