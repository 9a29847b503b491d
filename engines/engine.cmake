# engines/engine.cmake: the event engines (engine.h) and the fiber IO layer (io.h), with their
# tests. Included at the end of engines/CMakeLists.txt, after the `fiber` library exists.
#
# Targets:
#   engine   the event engines alone (no fibers): naive, merged, oneshot, edge [, libevent]
set(ENGINE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(ENGINE_NAMES naive merged oneshot edge)

add_library(engine STATIC
  ${ENGINE_DIR}/engine.c ${ENGINE_DIR}/engine_kcount.c ${ENGINE_DIR}/engine_epoll_naive.c
  ${ENGINE_DIR}/engine_epoll_merged.c ${ENGINE_DIR}/engine_epoll_oneshot.c
  ${ENGINE_DIR}/engine_epoll_edge.c)
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
message(STATUS "switchyard: event engines: ${ENGINE_NAMES}")

# ---- tests: engines/engine/<case>/<engine> -------------------------------------------------
add_executable(test-engine ${ENGINE_DIR}/tests/test-engine.c)
target_link_libraries(test-engine PRIVATE engine)
set_target_properties(test-engine PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tests)

foreach(eng ${ENGINE_NAMES})
  foreach(case deliver busy cancel pattern idle hup err reuse late_close lost_edge)
    set(name engines/engine/${case}/${eng})
    add_test(NAME ${name} COMMAND test-engine ${case} ${eng})
    set_tests_properties(${name} PROPERTIES TIMEOUT 20 SKIP_RETURN_CODE 77)
  endforeach()
endforeach()
