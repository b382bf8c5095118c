# Debian 12 packages (scripts/setup installs them). cpp-httplib and re2 ship no CMake
# config, so they come through pkg-config; cpp-httplib on Debian is a compiled library
# and its .pc flags (OpenSSL/zlib/brotli) must match the .so's ABI.
find_package(nlohmann_json 3.11 CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(CURL REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
find_package(ZLIB REQUIRED)
# RapidJSON (header only) parses profiler traces as a SAX stream; its 2016 headers are
# included as system headers so that their warnings are not ours.
find_package(RapidJSON CONFIG REQUIRED)
if(NOT TARGET mt_rapidjson)
  add_library(mt_rapidjson INTERFACE)
  target_include_directories(mt_rapidjson SYSTEM INTERFACE ${RapidJSON_INCLUDE_DIRS} ${RAPIDJSON_INCLUDE_DIRS})
endif()
if(MT_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
  include(GoogleTest)
endif()
