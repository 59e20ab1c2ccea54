# Helpers for the test folders; each folder's CMakeLists.txt includes this.
include_guard(DIRECTORY)

find_program(COREALLOC_VALGRIND valgrind)

# Memcheck with corealloc as the client's malloc. By default memcheck
# replaces the allocation functions exported by ANY shared object, which
# would put its own malloc in place of corealloc's; a somalloc synonym that
# names no library ("nouserintercepts") limits that to the system libraries,
# and the preloaded libcorealloc.so comes first in the lookup scope, so its
# functions are the ones called (the tests check it through
# corealloc_object_start). Errors from memcheck fail the test (status 99).
set(COREALLOC_VALGRIND_FLAGS
  --tool=memcheck --error-exitcode=99 --soname-synonyms=somalloc=nouserintercepts
  --leak-check=no --quiet)

# corealloc_test(<name> COMMAND <cmd...> LABELS <label...>
#                [ENVIRONMENT <VAR=value...>] [TIMEOUT <seconds>] [NO_PRELOAD]
#                [ZONES0] [THREAD_FRONTEND] [SECURE] [VALGRIND <cmd...>]
#                [PROPERTIES <test properties...>])
# Adds test <name>, run with LD_PRELOAD of libcorealloc.so unless NO_PRELOAD.
# Variants of the same command, each labelled like <name> plus its own label:
#   ZONES0           <name>_zones0, COREALLOC_ZONES=0 (page-map fallback)
#   THREAD_FRONTEND  <name>_thread, COREALLOC_FRONTEND=thread
#   SECURE           <name>_secure, COREALLOC_SECURE=1
#   VALGRIND <cmd>   <name>_valgrind, <cmd> (a smaller run) under memcheck,
#                    label valgrind
function(corealloc_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "NO_PRELOAD;ZONES0;THREAD_FRONTEND;SECURE" "TIMEOUT"
    "COMMAND;LABELS;ENVIRONMENT;VALGRIND;PROPERTIES")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(env ${T_ENVIRONMENT})
  if(NOT T_NO_PRELOAD)
    list(PREPEND env "LD_PRELOAD=$<TARGET_FILE:corealloc>")
  endif()

  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES
    LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${env}" ${T_PROPERTIES})
  if(T_ZONES0)
    add_test(NAME ${name}_zones0 COMMAND ${T_COMMAND})
    set_tests_properties(${name}_zones0 PROPERTIES
      LABELS "${T_LABELS};zones0" TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "${env};COREALLOC_ZONES=0" ${T_PROPERTIES})
  endif()
  if(T_THREAD_FRONTEND)
    add_test(NAME ${name}_thread COMMAND ${T_COMMAND})
    set_tests_properties(${name}_thread PROPERTIES
      LABELS "${T_LABELS};frontend-thread" TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "${env};COREALLOC_FRONTEND=thread" ${T_PROPERTIES})
  endif()
  if(T_SECURE)
    add_test(NAME ${name}_secure COMMAND ${T_COMMAND})
    set_tests_properties(${name}_secure PROPERTIES
      LABELS "${T_LABELS};secure" TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "${env};COREALLOC_SECURE=1" ${T_PROPERTIES})
  endif()
  if(T_VALGRIND AND COREALLOC_VALGRIND)
    add_test(NAME ${name}_valgrind
      COMMAND ${COREALLOC_VALGRIND} ${COREALLOC_VALGRIND_FLAGS} ${T_VALGRIND})
    # One at a time: memcheck's shadow memory for corealloc's address-space
    # reservations is large, and two at once can exhaust the machine.
    set_tests_properties(${name}_valgrind PROPERTIES
      LABELS "${T_LABELS};valgrind" TIMEOUT 600 RUN_SERIAL TRUE ENVIRONMENT "${env}"
      ${T_PROPERTIES})
  endif()
endfunction()

# corealloc_test_program(<target> <source...>): a test executable linked
# with the test support code (and not with corealloc: it is preloaded).
function(corealloc_test_program target)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE corealloc_test_support)
endfunction()

# corealloc_unit_test(<source> [ZONES0])
# A unit test of the library's internals: <source> is <file>_test.c, named
# after the file of src/<layer>/ it tests and kept in tests/<layer>/, linked
# against corealloc_internal (every internal symbol visible, src/ on the
# include path). Test and executable <layer>_<file>_test, labelled unit and
# <layer>; the target unit_tests (tests/CMakeLists.txt) builds them all.
#   ZONES0  <name>_zones0, COREALLOC_ZONES=0 (page-map fallback), label zones0
# Under an emulator (a cross build with qemu-user) every unit test runs with
# zones off, so no zones0 variant is needed there: qemu keeps state for every
# mapped page, and placing the zones may reserve a terabyte for a moment.
function(corealloc_unit_test source)
  cmake_parse_arguments(PARSE_ARGV 1 U "ZONES0" "" "")
  get_filename_component(layer ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  get_filename_component(stem ${source} NAME_WE)
  set(name ${layer}_${stem})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE corealloc_internal corealloc_test_support)
  # Tests that use the library's inline stacks need its 16-byte CAS.
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:C>:${COREALLOC_ARCH_C_FLAGS}>)
  add_dependencies(unit_tests ${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${layer}" TIMEOUT 120)
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "COREALLOC_ZONES=0;UNIT_UNDER_EMULATOR=1")
  elseif(U_ZONES0)
    add_test(NAME ${name}_zones0 COMMAND ${name})
    set_tests_properties(${name}_zones0 PROPERTIES
      LABELS "unit;${layer};zones0" TIMEOUT 120 ENVIRONMENT COREALLOC_ZONES=0)
  endif()
endfunction()
