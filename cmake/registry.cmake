# cmake/registry.cmake - the one declaration of each layer's members (switch backends, event
# engines, server models), from which the build, the C code and the tests all take their lists.
#
#   registry_member(<layer> <name> [IF <var>...] [PROPS <prop>...] [SOURCES <file>...]
#                   [LIBS <lib>...] [HEADERS <file>...] [WHY_NOT <text>])
#
# declares one member, in listing order (the order every listing, benchmark row and chart
# uses). It is compiled in when every IF variable is true (no IF: always). A compiled-in member
# adds its sources and libraries to the layer's, and its C identifier (the name with '-' made
# '_', e.g. asm-nofpu -> asm_nofpu) to the layer's X-macro list; HEADERS are included by the
# generated header (for a member whose hot function is inline). A member left out is reported
# at configure time with WHY_NOT. PROPS names the boolean properties that the member's own
# declaration in C sets true and that tests choose members by (their names as the layer's
# `--list --json` prints them); registry_props_test checks the two declarations agree.
#
#   registry_members(<layer> <out-var>)          the compiled-in names, in order
#   registry_members_with(<layer> <out-var> <prop>...)
#                                                those of them that declare every <prop>
#   registry_members_requiring(<layer> <out-var> <var>)
#                                                those of them built only when <var> is true
#                                                (IF <var>: e.g. the engines on io_uring)
#   registry_sources(<layer> <out-var>)          their sources (duplicates dropped)
#   registry_libs(<layer> <out-var>)             their libraries
#   registry_header(<layer> <macro> <file>)      writes <file>: `#define <macro>(X) X(id) ...`
#                                                and `<macro>_LEFT_OUT(X) X(id, "name", "why")`
#   registry_props_test(<test-name> <layer> <command>...)
#                                                a test that `<command> --list --json` gives
#                                                each member's PROPS true, and the others false
#
# The lists live in global properties, so the layers' tests/ folders and the layers built on
# top (servers/tests registers one test per switch backend and engine) read the same lists.
include_guard(GLOBAL)

function(registry_member layer name)
  cmake_parse_arguments(PARSE_ARGV 2 M "" "WHY_NOT" "IF;PROPS;SOURCES;LIBS;HEADERS")
  if(M_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "registry_member(${layer} ${name}): unknown ${M_UNPARSED_ARGUMENTS}")
  endif()
  # Known to the layer whether or not the member is built, so that choosing by a property or a
  # requirement no member declares (a misspelt one) stops the configure instead of choosing
  # nobody.
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_DECLARED_PROPS ${M_PROPS})
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_DECLARED_IFS ${M_IF})
  foreach(var IN LISTS M_IF)
    if(NOT ${var})
      if(NOT M_WHY_NOT)
        set(M_WHY_NOT "${var} is off")
      endif()
      set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_LEFT_OUT "${name} (${M_WHY_NOT})")
      string(REPLACE "-" "_" id "${name}")
      string(REPLACE "\"" "'" why "${M_WHY_NOT}")
      set_property(GLOBAL APPEND_STRING PROPERTY SWITCHYARD_${layer}_LEFT_OUT_C
                   " X(${id}, \"${name}\", \"${why}\")")
      return()
    endif()
  endforeach()
  set(abs_sources "")
  foreach(src IN LISTS M_SOURCES M_HEADERS)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${abs})
      message(FATAL_ERROR "registry_member(${layer} ${name}): no file ${abs}")
    endif()
    if(src IN_LIST M_SOURCES)
      list(APPEND abs_sources ${abs})
    endif()
  endforeach()
  string(REPLACE "-" "_" id "${name}")
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_MEMBERS ${name})
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_IDS ${id})
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_SOURCES ${abs_sources})
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_LIBS ${M_LIBS})
  set_property(GLOBAL APPEND PROPERTY SWITCHYARD_${layer}_HEADERS ${M_HEADERS})
  set_property(GLOBAL PROPERTY SWITCHYARD_${layer}_PROPS_${name} ${M_PROPS})
  set_property(GLOBAL PROPERTY SWITCHYARD_${layer}_IF_${name} ${M_IF})
endfunction()

function(registry_members layer out)
  get_property(v GLOBAL PROPERTY SWITCHYARD_${layer}_MEMBERS)
  set(${out} ${v} PARENT_SCOPE)
endfunction()

function(registry_members_with layer out)
  get_property(declared GLOBAL PROPERTY SWITCHYARD_${layer}_DECLARED_PROPS)
  foreach(prop IN LISTS ARGN)
    if(NOT prop IN_LIST declared)
      message(FATAL_ERROR "registry_members_with(${layer}): no ${layer} member declares ${prop}")
    endif()
  endforeach()
  get_property(names GLOBAL PROPERTY SWITCHYARD_${layer}_MEMBERS)
  set(v "")
  foreach(name IN LISTS names)
    get_property(props GLOBAL PROPERTY SWITCHYARD_${layer}_PROPS_${name})
    set(has ON)
    foreach(prop IN LISTS ARGN)
      if(NOT prop IN_LIST props)
        set(has OFF)
      endif()
    endforeach()
    if(has)
      list(APPEND v ${name})
    endif()
  endforeach()
  set(${out} ${v} PARENT_SCOPE)
endfunction()

function(registry_members_requiring layer out var)
  get_property(declared GLOBAL PROPERTY SWITCHYARD_${layer}_DECLARED_IFS)
  if(NOT var IN_LIST declared)
    message(FATAL_ERROR "registry_members_requiring(${layer}): no ${layer} member requires ${var}")
  endif()
  get_property(names GLOBAL PROPERTY SWITCHYARD_${layer}_MEMBERS)
  set(v "")
  foreach(name IN LISTS names)
    get_property(ifs GLOBAL PROPERTY SWITCHYARD_${layer}_IF_${name})
    if(var IN_LIST ifs)
      list(APPEND v ${name})
    endif()
  endforeach()
  set(${out} ${v} PARENT_SCOPE)
endfunction()

function(registry_sources layer out)
  get_property(v GLOBAL PROPERTY SWITCHYARD_${layer}_SOURCES)
  list(REMOVE_DUPLICATES v)
  set(${out} ${v} PARENT_SCOPE)
endfunction()

function(registry_libs layer out)
  get_property(v GLOBAL PROPERTY SWITCHYARD_${layer}_LIBS)
  set(${out} ${v} PARENT_SCOPE)
endfunction()

# Also prints the configure-time summary: what is compiled in, and why the rest is not.
function(registry_header layer macro file)
  get_property(ids GLOBAL PROPERTY SWITCHYARD_${layer}_IDS)
  get_property(names GLOBAL PROPERTY SWITCHYARD_${layer}_MEMBERS)
  get_property(headers GLOBAL PROPERTY SWITCHYARD_${layer}_HEADERS)
  get_property(left_out GLOBAL PROPERTY SWITCHYARD_${layer}_LEFT_OUT)
  set(text "/* Generated by cmake/registry.cmake from ${layer}/CMakeLists.txt; do not edit. */\n")
  string(APPEND text "#pragma once\n")
  foreach(h IN LISTS headers)
    get_filename_component(h ${h} NAME)
    string(APPEND text "#include \"${h}\"\n")
  endforeach()
  string(APPEND text "#define ${macro}(X)")
  foreach(id IN LISTS ids)
    string(APPEND text " X(${id})")
  endforeach()
  string(APPEND text "\n")
  get_property(left_out_c GLOBAL PROPERTY SWITCHYARD_${layer}_LEFT_OUT_C)
  string(APPEND text "/* Declared but not built here: X(id, name, why). */\n")
  string(APPEND text "#define ${macro}_LEFT_OUT(X)${left_out_c}\n")
  file(CONFIGURE OUTPUT ${file} CONTENT "${text}" @ONLY)
  list(JOIN names ", " names_text)
  message(STATUS "switchyard: ${layer}: ${names_text}")
  foreach(l IN LISTS left_out)
    message(STATUS "switchyard: ${layer}: not built: ${l}")
  endforeach()
endfunction()

# Every property some member of the layer declares is checked on every member: the program must
# report it true for the members whose registry line names it and false for the others (a
# property the program does not know is reported as missing).
function(registry_props_test test layer)
  get_property(names GLOBAL PROPERTY SWITCHYARD_${layer}_MEMBERS)
  set(decls "")
  foreach(name IN LISTS names)
    get_property(props GLOBAL PROPERTY SWITCHYARD_${layer}_PROPS_${name})
    list(JOIN props "," props_csv)
    list(APPEND decls "${name}=${props_csv}")
  endforeach()
  add_test(NAME ${test}
           COMMAND /usr/bin/python3 -c "import json, subprocess, sys; i = sys.argv.index('--'); d = json.loads(subprocess.run(sys.argv[1:i] + ['--list', '--json'], capture_output=True, check=True).stdout); decl = {k: set(filter(None, v.split(','))) for k, v in (a.split('=', 1) for a in sys.argv[i + 1:])}; props = sorted(set().union(*decl.values())); bad = ['%s: %s is %s in the program, %s in the registry' % (m['name'], p, m['props'].get(p), p in decl.get(m['name'], ())) for m in d['members'] for p in props if m['props'].get(p) is not (p in decl.get(m['name'], ()))]; sys.exit('; '.join(bad) if bad else 0)"
                   ${ARGN} -- ${decls})
endfunction()
