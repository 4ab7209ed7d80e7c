# cmake -DRUNNER=test_harness -P check_harness.cmake: each harness case's exit code is
# what CTest needs to tell skipped (77), failed (not 0, not 77) and passed (0) apart;
# a name that matches no case (ran nothing) fails.
function(expect case want)
  execute_process(COMMAND ${RUNNER} "${case}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(want STREQUAL "fail")
    if(rc EQUAL 0 OR rc EQUAL 77)
      message(FATAL_ERROR "'${case}' exited ${rc}; a failed check must fail the run\n${out}")
    endif()
  elseif(NOT rc EQUAL want)
    message(FATAL_ERROR "'${case}' exited ${rc}, expected ${want}\n${out}")
  endif()
  message(STATUS "'${case}': exit code ${rc} (${want})")
endfunction()

expect("skips and checks nothing" 77)
expect("skips one part and fails a check in another" fail)
expect("skips one part and passes a check in another" 0)
expect("a name that matches no test case" fail)
