# Finds CCCL >= 3.2 and provides the target CCCL::CCCL.
#
# Order of search:
#   1. CCCL_DIR, if the user set it (-DCCCL_DIR=<dir containing cccl-config.cmake>).
#   2. NVIDIA's pip package nvidia-cuda-cccl, located through the Python interpreter on PATH
#      (or Python3_EXECUTABLE), so that users need not type a path.
#   3. CMake's default search (CMAKE_PREFIX_PATH, system locations).
#
# CCCL's config defines its targets as non-imported INTERFACE libraries, so its include directory
# is passed with -I. Both g++ and nvcc search -I directories before nvcc's implicit
# "-isystem <toolkit>/include/cccl", so these headers win over the toolkit's older CCCL 3.0.
include_guard(GLOBAL)

set(RMM_MIN_CCCL_VERSION 3.2)

function(_rmm_cccl_dir_from_pip out_var)
  if(Python3_EXECUTABLE)
    set(_rmm_python "${Python3_EXECUTABLE}")
  else()
    find_program(_rmm_python NAMES python3 python)
  endif()
  if(NOT _rmm_python)
    return()
  endif()
  execute_process(
    COMMAND "${_rmm_python}" -c [=[
import importlib.metadata as m
try:
    d = m.distribution("nvidia-cuda-cccl")
except m.PackageNotFoundError:
    raise SystemExit(1)
for f in d.files or []:
    if f.name == "cccl-config.cmake":
        print(d.locate_file(f).parent.resolve(), end="")
        break
]=]
    OUTPUT_VARIABLE dir
    RESULT_VARIABLE rc
    ERROR_QUIET)
  if(rc EQUAL 0 AND dir)
    set(${out_var} "${dir}" PARENT_SCOPE)
  endif()
endfunction()

if(NOT TARGET CCCL::CCCL)
  set(_rmm_cccl_hints "")
  if(NOT CCCL_DIR)
    _rmm_cccl_dir_from_pip(_rmm_cccl_hints)
  endif()
  find_package(CCCL ${RMM_MIN_CCCL_VERSION} CONFIG QUIET HINTS ${_rmm_cccl_hints})
  if(NOT CCCL_FOUND)
    message(FATAL_ERROR
      "rmm needs CCCL >= ${RMM_MIN_CCCL_VERSION} (the CUDA 13.0 toolkit bundles CCCL 3.0, which "
      "lacks cuda::mr::any_resource and shared_resource). Install the pinned pip package:\n"
      "    python3 -m pip install nvidia-cuda-cccl==13.2.27\n"
      "or pass -DCCCL_DIR=<directory containing cccl-config.cmake> of another CCCL >= "
      "${RMM_MIN_CCCL_VERSION}.")
  endif()
  message(STATUS "rmm: using CCCL ${CCCL_VERSION} from ${CCCL_DIR}")
endif()
