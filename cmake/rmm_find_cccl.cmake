# Finds the headers of CCCL >= 3.5 and provides the imported target rmm::cccl.
#
# Where the headers come from, first match wins:
#   1. RMM_CCCL_INCLUDE_DIR, if set: the directory that holds cuda/std/__cccl/version.h.
#   2. CCCL_DIR, if set (-DCCCL_DIR=<directory of cccl-config.cmake>, or left in the cache by a
#      find_package(CCCL) of the consumer's own): the headers are looked for relative to it.
#   3. NVIDIA's pip package nvidia-cuda-cccl, located through the Python interpreter on PATH (or
#      Python3_EXECUTABLE), so that users need not type a path.
#   4. CMake's default search (CMAKE_PREFIX_PATH, system locations).
#
# Why not find_package(CCCL): the pip wheels' own cccl-config.cmake (13.2.86, 13.3.5.0.6) cannot
# find their headers (thrust-header-search.cmake looks for thrust/version.h beside the CMake
# files, while the headers are in nvidia/cu13/include/cccl), and CCCL's targets are non-imported,
# so its headers reach our users with -I and every warning inside them fails a -Werror build.
#
# rmm::cccl is an IMPORTED target, so for C++ its directory is passed with -isystem: warnings in
# CCCL are not ours. Order matters: the CUDA 13.0 toolkit ships CCCL 3.0 (<toolkit>/include/cccl,
# and a copy of its nv/target in <toolkit>/include itself). For g++/clang++ -isystem directories
# are searched in command-line order, and rmm links rmm::cccl before CUDA::cudart, so these
# headers win. nvcc, however, adds <toolkit>/include as an implicit -I, searched before every
# -isystem: Thrust/CUB device code then sees CCCL 3.0's nv/target (missing the 3.5 macros such as
# _NV_IF__NV_TARGET_BOOL_NV_HAS_FEATURE_SM_100f). So CUDA sources get the directory with -I (a
# directory given as both -I and -isystem counts as a system one); CCCL's headers declare
# themselves system headers, so their warnings still do not reach a -Werror build.

set(RMM_MIN_CCCL_VERSION 3.5.0)

# Sets out_var to the include directory of the pip package nvidia-cuda-cccl, if installed.
function(_rmm_cccl_include_from_pip out_var)
  if(Python3_EXECUTABLE)
    set(python "${Python3_EXECUTABLE}")
  else()
    find_program(RMM_PYTHON3 NAMES python3 python)
    set(python "${RMM_PYTHON3}")
  endif()
  if(NOT python)
    return()
  endif()
  execute_process(
    COMMAND "${python}" -c [=[
import importlib.metadata as m
try:
    d = m.distribution("nvidia-cuda-cccl")
except m.PackageNotFoundError:
    raise SystemExit(1)
for f in d.files or []:
    if f.as_posix().endswith("cuda/std/__cccl/version.h"):
        print(d.locate_file(f).resolve().parents[3], end="")
        break
]=]
    OUTPUT_VARIABLE dir
    RESULT_VARIABLE rc
    ERROR_QUIET)
  if(rc EQUAL 0 AND dir)
    set(${out_var} "${dir}" PARENT_SCOPE)
  endif()
endfunction()

# Reads CCCL_VERSION (e.g. 3005000) from <include_dir>/cuda/std/__cccl/version.h as "3.5.0".
function(_rmm_cccl_version include_dir out_var)
  file(STRINGS "${include_dir}/cuda/std/__cccl/version.h" line
       REGEX "^#define CCCL_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CCCL_VERSION ([0-9]+).*" "\\1" number "${line}")
  if(NOT number MATCHES "^[0-9]+$")
    set(${out_var} "" PARENT_SCOPE)
    return()
  endif()
  math(EXPR major "${number} / 1000000")
  math(EXPR minor "(${number} / 1000) % 1000")
  math(EXPR patch "${number} % 1000")
  set(${out_var} "${major}.${minor}.${patch}" PARENT_SCOPE)
endfunction()

if(NOT TARGET rmm::cccl)
  if(RMM_CCCL_INCLUDE_DIR)
    set(_rmm_cccl_how "${RMM_CCCL_FOUND_THROUGH}")
    if(NOT _rmm_cccl_how)
      set(_rmm_cccl_how "RMM_CCCL_INCLUDE_DIR")
    endif()
  else()
    set(_rmm_cccl_hints "")
    if(CCCL_DIR)
      # Layouts: <prefix>/lib/cmake/cccl with <prefix>/include (CCCL's install, a source tree's
      # lib/cmake/cccl with ../../../ holding cuda/ directly) and the pip wheel's
      # nvidia/cu13/cccl/lib/cmake/cccl with nvidia/cu13/include/cccl.
      get_filename_component(_rmm_root "${CCCL_DIR}/../../.." ABSOLUTE)
      list(APPEND _rmm_cccl_hints "${_rmm_root}" "${_rmm_root}/include" "${_rmm_root}/../include/cccl"
           "${_rmm_root}/include/cccl" "${_rmm_root}/libcudacxx/include")
      set(_rmm_cccl_how "CCCL_DIR=${CCCL_DIR}")
    else()
      _rmm_cccl_include_from_pip(_rmm_cccl_hints)
      set(_rmm_cccl_how "pip package nvidia-cuda-cccl")
    endif()
    if(_rmm_cccl_hints)
      find_path(RMM_CCCL_INCLUDE_DIR cuda/std/__cccl/version.h HINTS ${_rmm_cccl_hints} NO_DEFAULT_PATH
                DOC "Directory holding CCCL's headers (cuda/, cub/, thrust/, nv/)")
    endif()
    if(NOT RMM_CCCL_INCLUDE_DIR AND NOT CCCL_DIR)
      find_path(RMM_CCCL_INCLUDE_DIR cuda/std/__cccl/version.h PATH_SUFFIXES include/cccl cccl
                DOC "Directory holding CCCL's headers (cuda/, cub/, thrust/, nv/)")
      set(_rmm_cccl_how "CMake's default search")
    endif()
  endif()

  set(_rmm_cccl_version "")
  if(RMM_CCCL_INCLUDE_DIR AND EXISTS "${RMM_CCCL_INCLUDE_DIR}/cuda/std/__cccl/version.h")
    _rmm_cccl_version("${RMM_CCCL_INCLUDE_DIR}" _rmm_cccl_version)
  endif()
  if(NOT _rmm_cccl_version OR _rmm_cccl_version VERSION_LESS RMM_MIN_CCCL_VERSION)
    if(_rmm_cccl_version)
      set(_rmm_found "found CCCL ${_rmm_cccl_version} in ${RMM_CCCL_INCLUDE_DIR} (through ${_rmm_cccl_how})")
    else()
      set(_rmm_found "found no CCCL headers (looked through ${_rmm_cccl_how})")
    endif()
    # Clear the cached result so that a corrected environment is looked at again.
    unset(RMM_CCCL_INCLUDE_DIR CACHE)
    message(FATAL_ERROR
      "rmm needs CCCL >= ${RMM_MIN_CCCL_VERSION} and ${_rmm_found}. The CUDA 13.0 toolkit bundles "
      "CCCL 3.0, which lacks cuda::mr::any_resource and shared_resource, and CCCL 3.2 breaks C++20 "
      "consumers. Install the pinned pip package:\n"
      "    python3 -m pip install nvidia-cuda-cccl==13.3.5.0.6\n"
      "or pass -DCCCL_DIR=<directory of cccl-config.cmake> or "
      "-DRMM_CCCL_INCLUDE_DIR=<directory holding cuda/std/__cccl/version.h> of another CCCL >= "
      "${RMM_MIN_CCCL_VERSION}.")
  endif()

  # In a consumer: the installed librmm was compiled against one CCCL; any_resource crosses its
  # interface, so another major.minor would link but break at run time (or not link at all).
  if(RMM_CCCL_BUILT_WITH)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _rmm_built "${RMM_CCCL_BUILT_WITH}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" _rmm_found_minor "${_rmm_cccl_version}")
    if(NOT _rmm_built STREQUAL _rmm_found_minor)
      unset(RMM_CCCL_INCLUDE_DIR CACHE)
      message(FATAL_ERROR
        "rmm: this librmm was built with CCCL ${RMM_CCCL_BUILT_WITH}, but CCCL "
        "${_rmm_cccl_version} was found in the consumer (through ${_rmm_cccl_how}). "
        "cuda::mr::any_resource is part of librmm's interface and changes between CCCL "
        "releases: use CCCL ${_rmm_built}.x (-DCCCL_DIR or -DRMM_CCCL_INCLUDE_DIR) or rebuild rmm.")
    endif()
  endif()
  set(RMM_CCCL_FOUND_THROUGH "${_rmm_cccl_how}" CACHE INTERNAL "How rmm found CCCL")
  add_library(rmm::cccl INTERFACE IMPORTED)
  set_target_properties(
    rmm::cccl
    PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
               "$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:${RMM_CCCL_INCLUDE_DIR}>"
               INTERFACE_COMPILE_OPTIONS "$<$<COMPILE_LANGUAGE:CUDA>:-I${RMM_CCCL_INCLUDE_DIR}>")
  set(RMM_CCCL_VERSION "${_rmm_cccl_version}")
  if(NOT rmm_FIND_QUIETLY)
    message(STATUS "rmm: using CCCL ${_rmm_cccl_version} from ${RMM_CCCL_INCLUDE_DIR} (${_rmm_cccl_how})")
  endif()
endif()
