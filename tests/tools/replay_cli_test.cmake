# rmm-replay end to end (CTest replay_tool_cli): writes a small log, replays it over the simulated
# upstream with --search, and checks the table. Runs without a GPU.
#   cmake -DTOOL=path/to/rmm-replay -DWORK_DIR=dir [-DPYTHON=python3 -DRENDER=render.py]
#         -P replay_cli_test.cmake
# With PYTHON, also draws the --pictures output with tools/pictures/render.py and checks it.
set(log ${WORK_DIR}/replay_cli_test.csv)
# Peak live: 3 MiB + 1 MiB + 512 bytes = 4,194,816 bytes at the fourth line.
file(WRITE ${log} "Thread,Time,Action,Pointer,Size,Stream
0,10:00:00.000001,allocate,0x7f0000000000,3145728,0
0,10:00:00.000002,allocate,0x7f0000300000,1048576,0
0,10:00:00.000003,allocate,0x7f0000400000,512,0
0,10:00:00.000004,free,0x7f0000000000,3145728,0
0,10:00:00.000005,allocate,0x7f0000000000,2097152,0
0,10:00:00.000006,free,0x7f0000400000,512,0
0,10:00:00.000007,free,0x7f0000300000,1048576,0
")
execute_process(COMMAND ${TOOL} ${log} --resource pool --simulated 1G --search
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rmm-replay exited with ${rc}")
endif()
if(NOT out MATCHES "peak live 4194816 bytes")
  message(FATAL_ERROR "the table does not give the log's peak live bytes")
endif()
if(NOT out MATCHES "\\| pool \\| [0-9.]+ \\| 4\\.0 \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\| [0-9]+ \\|")
  message(FATAL_ERROR "no complete pool row")
endif()
execute_process(COMMAND ${TOOL} ${log} --resource nonsense --simulated 1G RESULT_VARIABLE bad
                OUTPUT_QUIET ERROR_VARIABLE bad_err)
if(NOT bad EQUAL 2 OR NOT bad_err MATCHES "unknown resource 'nonsense'")
  message(FATAL_ERROR "an unknown resource must exit 2 naming it (got ${bad}: ${bad_err})")
endif()
# --pictures: the timeline (one line per sampled event, live back at 2 MiB at the end) and the
# pool's snapshot at the peak (the three live blocks allocated), then drawn by render.py.
set(pics ${WORK_DIR}/replay_cli_pictures)
file(REMOVE_RECURSE ${pics})
file(MAKE_DIRECTORY ${pics})
execute_process(COMMAND ${TOOL} ${log} --resource pool --simulated 1G --pictures ${pics}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rmm-replay --pictures exited with ${rc}: ${err}")
endif()
file(STRINGS ${pics}/timeline_pool.csv timeline)
list(LENGTH timeline lines)
list(GET timeline 3 at_peak)
list(GET timeline 7 at_end)
if(NOT lines EQUAL 8 OR NOT at_peak MATCHES "^pool,2,4194816,[0-9]+$" OR NOT at_end MATCHES "^pool,6,2097152,")
  message(FATAL_ERROR "unexpected timeline: ${timeline}")
endif()
file(READ ${pics}/snapshot_pool.json snapshot)
string(REGEX MATCHALL "\\[[0-9]+,[0-9]+,1,0\\]" allocated "${snapshot}")
list(LENGTH allocated n_allocated)
if(NOT n_allocated EQUAL 3 OR NOT snapshot MATCHES "\"free_bytes\"")
  message(FATAL_ERROR "the snapshot at the peak must hold the 3 live blocks: ${snapshot}")
endif()
if(PYTHON)
  execute_process(COMMAND ${PYTHON} ${RENDER} ${pics} RESULT_VARIABLE rc OUTPUT_VARIABLE drawn
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT drawn MATCHES "timeline.svg" OR NOT drawn MATCHES "snapshot_pool.svg")
    message(FATAL_ERROR "render.py failed (${rc}): ${drawn}${err}")
  endif()
  file(READ ${pics}/snapshot_pool.svg svg)
  string(REGEX MATCHALL "fill=\"#d62728\"" red "${svg}")
  list(LENGTH red n_red)
  if(NOT n_red EQUAL 4)  # three blocks and the legend
    message(FATAL_ERROR "the picture must draw the 3 allocated blocks (found ${n_red} red)")
  endif()
endif()
file(REMOVE_RECURSE ${pics})
file(REMOVE ${log})
