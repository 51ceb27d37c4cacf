# Install and export: after `cmake --install build --prefix P`, a C++ trainer's CMakeLists.txt says
#   find_package(stoker 0.1 REQUIRED)                  # with -DCMAKE_PREFIX_PATH=P
#   target_link_libraries(trainer PRIVATE stoker::stoker)
# and includes "stoker/loader.h" (docs/cpp.md). What P holds:
#   include/stoker/*.h                     the public headers, alone (scripts/check-module-deps
#                                          keeps src/ and tools/ out of them)
#   lib/libstoker_<module>.a               one static library per module, as the build makes them
#   lib/libstoker_arrow.so                 the Parquet/Arrow module, where built (cmake/arrow.cmake)
#   lib/cmake/stoker/stokerConfig.cmake    find_dependency for what the static libraries link
#   bin/stoker                             the CLI (component Runtime)
# One namespace, stoker::. The target to link is stoker::stoker, the whole library; it carries
# the include directory, C++20 and, with Arrow, an RPATH to lib/ (where the static code looks for
# libstoker_arrow.so). The module libraries are exported too, as stoker::stoker_<module>, because
# stoker::stoker links them and a static library's users must link what it links; they are not
# an API (their headers are private and not installed).
# Components: Development (headers, archives, CMake files), Runtime (the CLI, the Arrow module);
# `pip install .` installs neither (only "python", pyproject.toml).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STOKER_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/stoker" CACHE STRING
    "Where stokerConfig.cmake is installed (relative to the prefix)")

set_target_properties(stoker_lib PROPERTIES EXPORT_NAME stoker)
target_include_directories(stoker_lib INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(stoker_lib INTERFACE cxx_std_20)  # the public headers are C++20

set(_stoker_module_targets "")
foreach(mod ${STOKER_MODULES})
  list(APPEND _stoker_module_targets stoker_${mod})
endforeach()
install(TARGETS stoker_lib ${_stoker_module_targets} EXPORT stokerTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/stoker DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT Development FILES_MATCHING PATTERN "*.h")
install(EXPORT stokerTargets NAMESPACE stoker:: DESTINATION ${STOKER_INSTALL_CMAKEDIR}
        COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stokerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stokerConfig.cmake INSTALL_DESTINATION ${STOKER_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same 0.MINOR satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/stokerConfig.cmake ${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
        DESTINATION ${STOKER_INSTALL_CMAKEDIR} COMPONENT Development)

install(TARGETS stoker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
if(STOKER_HAVE_ARROW)
  install(TARGETS stoker_arrow LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime)
  # The static code finds the module in a directory on the RUNPATH of the binary it is linked
  # into (src/records/arrow_sources.cc): the installed CLI's is lib/, and a trainer's gets lib/
  # from stoker::stoker.
  set_property(TARGET stoker APPEND PROPERTY INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  target_link_options(stoker_lib INTERFACE
    "$<INSTALL_INTERFACE:LINKER:-rpath,$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}>")
endif()
