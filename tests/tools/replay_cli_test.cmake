# rmm-replay end to end (CTest replay_tool_cli): writes a small log, replays it over the simulated
# upstream with --search, and checks the table. Runs without a GPU.
#   cmake -DTOOL=path/to/rmm-replay -DWORK_DIR=dir -P replay_cli_test.cmake
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
file(REMOVE ${log})
