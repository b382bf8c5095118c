# Strict warnings on our own code only (system headers are included with -isystem).
# Warnings are errors for developers and CI (scripts/test passes -DMT_WERROR=ON), not for
# everyone who builds mt: g++ 12 at -O3 reports known false positives (-Wrestrict) that
# must not cost a packager or a user their binary.
option(MT_WERROR "Treat compiler warnings as errors" OFF)
function(mt_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(MT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Unit-test executable from sources; registered with ctest under label "unit".
function(mt_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  mt_strict(${name})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  add_dependencies(mt_unit_tests ${name})
  gtest_discover_tests(${name} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
endfunction()
