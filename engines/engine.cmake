# engines/engine.cmake: the event engines (engine.h) and the fiber IO layer (io.h), with their
# tests. Included at the end of engines/CMakeLists.txt, after the `fiber` library exists.
#
# Targets:
#   engine   the event engines alone (no fibers): naive, merged, oneshot, edge [, libevent],
#            poll, select [, uring-poll]
#   fiber    gains the IO layer (io.c, io_timer.c) and links `engine`
#   engines  what clients of the layer link (echo-server's fiber model): fiber + IO + engines
set(ENGINE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(ENGINE_NAMES naive merged oneshot edge)

add_library(engine STATIC
  ${ENGINE_DIR}/engine.c ${ENGINE_DIR}/engine_kcount.c ${ENGINE_DIR}/engine_epoll_naive.c
  ${ENGINE_DIR}/engine_epoll_merged.c ${ENGINE_DIR}/engine_epoll_oneshot.c
  ${ENGINE_DIR}/engine_epoll_edge.c ${ENGINE_DIR}/engine_poll.c ${ENGINE_DIR}/engine_select.c)
target_include_directories(engine PUBLIC ${ENGINE_DIR})
if(LIBEVENT_FOUND)
  target_sources(engine PRIVATE ${ENGINE_DIR}/engine_libevent.c)
  target_compile_definitions(engine PRIVATE SWITCHYARD_HAVE_LIBEVENT=1)
  target_link_libraries(engine PUBLIC PkgConfig::LIBEVENT)
  list(APPEND ENGINE_NAMES libevent)
  message(STATUS "switchyard: libevent engine: yes")
else()
  message(STATUS "switchyard: libevent engine: no (install libevent-dev)")
endif()
list(APPEND ENGINE_NAMES poll select)
if(LIBURING_FOUND)
  target_sources(engine PRIVATE ${ENGINE_DIR}/engine_uring.c ${ENGINE_DIR}/engine_uring_poll.c)
  target_compile_definitions(engine PRIVATE SWITCHYARD_HAVE_LIBURING=1)
  target_link_libraries(engine PUBLIC PkgConfig::LIBURING)
  list(APPEND ENGINE_NAMES uring-poll)
  message(STATUS "switchyard: io_uring engines: yes")
else()
  message(STATUS "switchyard: io_uring engines: no (install liburing-dev)")
endif()
message(STATUS "switchyard: event engines: ${ENGINE_NAMES}")

target_sources(fiber PRIVATE ${ENGINE_DIR}/io.c ${ENGINE_DIR}/io_timer.c)
target_link_libraries(fiber PUBLIC engine)
add_library(engines INTERFACE)
target_link_libraries(engines INTERFACE fiber engine)

# ---- tests: engines/engine/<case>/<engine>, engines/io/<case>/<engine>/<sched> -------------
add_executable(test-engine ${ENGINE_DIR}/tests/test-engine.c)
target_link_libraries(test-engine PRIVATE engine)
add_executable(test-io ${ENGINE_DIR}/tests/test-io.c)
target_link_libraries(test-io PRIVATE engines)
set_target_properties(test-engine test-io PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                     ${CMAKE_CURRENT_BINARY_DIR}/tests)

foreach(eng ${ENGINE_NAMES})
  foreach(case deliver busy cancel pattern idle hup err reuse late_close lost_edge
               high_fd)
    set(name engines/engine/${case}/${eng})
    add_test(NAME ${name} COMMAND test-engine ${case} ${eng})
    set_tests_properties(${name} PROPERTIES TIMEOUT 20 SKIP_RETURN_CODE 77)
  endforeach()
  foreach(sched star ring)
    foreach(case close_wait fd_reuse hup err half_close duplex sleepers timeout busy
                 ctl_pattern)
      set(name engines/io/${case}/${eng}/${sched})
      add_test(NAME ${name} COMMAND test-io ${case} ${eng} ${sched})
      set_tests_properties(${name} PROPERTIES TIMEOUT 30 SKIP_RETURN_CODE 77)
    endforeach()
    # The kernel's own counts (perf stat on the syscall tracepoints) against the engine's.
    set(name engines/io/kernel_calls/${eng}/${sched})
    add_test(NAME ${name} COMMAND test-io kernel_calls ${eng} ${sched})
    set_tests_properties(${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 LABELS no-asan)
  endforeach()
endforeach()
