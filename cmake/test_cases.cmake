# cmake/test_cases.cmake - a C test program's cases, read from the one header that declares them
# (an X-macro list the program builds its case table from), so that its CTest tests and its
# table cannot name different cases.
#
#   test_cases(<prefix> <header> PROPS <prop>...)
#
# reads every line of <header> that starts with `X(`: one case each, X(name[, property ...]),
# the properties separated by spaces. It sets, in the caller's scope:
#   <prefix>          every case, in the header's order
#   <prefix>_<prop>   the cases that declare <prop>, for each <prop> of PROPS
#   <prefix>_LISTED   one "name property ..." element per case, as `program --list` prints it
# A line it cannot read, or a property not among PROPS, stops the configure: either would quietly
# leave a case out of its tests. Editing the header reconfigures.
#
#   test_cases_list_test(<test-name> <prefix> <command>...)
#
# adds a test that `<command> --list` prints exactly <prefix>_LISTED: the program's table and
# what this module read agree line for line (a case CMake could not see fails here).
include_guard(GLOBAL)

function(test_cases prefix header)
  cmake_parse_arguments(PARSE_ARGV 2 T "" "" "PROPS")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  file(READ ${header} text)
  # The line continuations of the macro go first: a list element ending in a backslash would
  # swallow the separator after it.
  string(REPLACE "\\" "" text "${text}")
  string(REGEX MATCHALL "\n[ \t]*X\\([^\n]*" lines "${text}")
  set(all "")
  set(listed "")
  foreach(prop IN LISTS T_PROPS)
    set(with_${prop} "")
  endforeach()
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "^\n[ \t]*X\\(([A-Za-z0-9_]+)(,([A-Za-z0-9_ ]*))?\\)[ \t]*$")
      string(STRIP "${line}" line)
      message(FATAL_ERROR "${header}: cannot read '${line}' (one X(name[, property ...]) a line)")
    endif()
    set(name ${CMAKE_MATCH_1})
    string(REGEX MATCHALL "[A-Za-z0-9_]+" props "${CMAKE_MATCH_3}")
    list(APPEND all ${name})
    foreach(prop IN LISTS props)
      if(NOT prop IN_LIST T_PROPS)
        message(FATAL_ERROR "${header}: case ${name} declares '${prop}', which is none of: "
                            "${T_PROPS}")
      endif()
      list(APPEND with_${prop} ${name})
    endforeach()
    list(JOIN props " " props_text)
    string(STRIP "${name} ${props_text}" entry)
    list(APPEND listed "${entry}")
  endforeach()
  if(NOT all)
    message(FATAL_ERROR "${header}: no X(name ...) lines")
  endif()
  set(${prefix} ${all} PARENT_SCOPE)
  set(${prefix}_LISTED "${listed}" PARENT_SCOPE)
  foreach(prop IN LISTS T_PROPS)
    set(${prefix}_${prop} ${with_${prop}} PARENT_SCOPE)
  endforeach()
endfunction()

function(test_cases_list_test test prefix)
  add_test(NAME ${test}
           COMMAND /usr/bin/python3 -c "import subprocess, sys; i = sys.argv.index('--'); got = subprocess.run(sys.argv[1:i] + ['--list'], capture_output=True, text=True, check=True).stdout.splitlines(); want = sys.argv[i + 1:]; sys.exit(0 if got == want else 'the program lists %s, CMake read %s' % (got, want))"
                   ${ARGN} -- ${${prefix}_LISTED})
  set_tests_properties(${test} PROPERTIES TIMEOUT 30)
endfunction()
