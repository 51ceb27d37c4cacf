# Apache Arrow C++ (Parquet and Arrow IPC readers in src/records/arrow/) from the pyarrow wheel:
# Arrow is not packaged in Debian 12, and scripts/setup installs pyarrow into .venv. The wheel
# ships headers (pyarrow.get_include()) and libraries with versioned names only
# (libarrow.so.2600), which are linked by full path with an RPATH to their folder.
#   STOKER_ARROW=AUTO  (default) use pyarrow when the Python below imports it, else build without
#   STOKER_ARROW=ON    fail the configure when it cannot be used
#   STOKER_ARROW=OFF   build without it: Parquet and Arrow inputs fail with kUnimplemented
# The Python is STOKER_ARROW_PYTHON, else scikit-build-core's, else .venv/bin/python, else python3.
# Sets STOKER_HAVE_ARROW and the function stoker_use_arrow_sources(target).
set(STOKER_ARROW "AUTO" CACHE STRING "Parquet/Arrow readers via pyarrow's C++ libraries: AUTO, ON or OFF")
set_property(CACHE STOKER_ARROW PROPERTY STRINGS AUTO ON OFF)
set(STOKER_ARROW_PYTHON "" CACHE FILEPATH "Python interpreter with pyarrow (for STOKER_ARROW)")
set(STOKER_HAVE_ARROW OFF)

function(_stoker_arrow_missing why)
  if(STOKER_ARROW STREQUAL "ON")
    message(FATAL_ERROR "STOKER_ARROW=ON but ${why}")
  endif()
  message(STATUS "stoker: building without Parquet/Arrow readers (${why})")
endfunction()

if(NOT STOKER_ARROW STREQUAL "OFF")
  set(_py "${STOKER_ARROW_PYTHON}")
  if(NOT _py AND SKBUILD AND Python_EXECUTABLE)
    set(_py "${Python_EXECUTABLE}")  # the interpreter scikit-build-core builds the package for
  endif()
  if(NOT _py AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    set(_py "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  endif()
  if(NOT _py)
    find_program(_py NAMES python3)
  endif()
  # The wheel's libraries use the C++11 std::string ABI when libarrow exports std::__cxx11
  # symbols (manylinux_2_28 wheels); old-ABI (manylinux2014) wheels cannot share std::string
  # with stoker and are refused.
  set(_probe "import pyarrow as pa, glob, os
d = pa.get_library_dirs()[0]
libs = [sorted(glob.glob(os.path.join(d, 'lib' + n + '.so.*')), key=len)[0] for n in ('arrow', 'parquet')]
print(pa.__version__); print(pa.get_include()); print(d)
for p in libs: print(p)
print(1 if b'__cxx11' in open(libs[0], 'rb').read() else 0)")
  if(_py)
    execute_process(COMMAND "${_py}" -c "${_probe}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  else()
    set(_rc 1)
  endif()
  if(NOT _rc EQUAL 0)
    _stoker_arrow_missing("'${_py}' cannot import pyarrow (install it: scripts/setup)")
  else()
    string(REPLACE "\n" ";" _out "${_out}")
    list(GET _out 0 STOKER_ARROW_VERSION)
    list(GET _out 1 _inc)
    list(GET _out 2 STOKER_ARROW_LIBDIR)
    list(GET _out 3 _libarrow)
    list(GET _out 4 _libparquet)
    list(GET _out 5 _cxx11)
    if(NOT _cxx11)
      _stoker_arrow_missing("pyarrow ${STOKER_ARROW_VERSION} uses the old libstdc++ ABI")
    else()
      set(STOKER_HAVE_ARROW ON)
      message(STATUS "stoker: Parquet/Arrow readers with pyarrow ${STOKER_ARROW_VERSION} (${STOKER_ARROW_LIBDIR})")
      add_library(stoker_arrow_deps INTERFACE)
      target_include_directories(stoker_arrow_deps SYSTEM INTERFACE "${_inc}")
      target_link_libraries(stoker_arrow_deps INTERFACE "${_libparquet}" "${_libarrow}")
      # The shared libraries are found through the RPATH of each binary (the build tree's own,
      # which CMake derives from the full paths) and of the Python extension (python/).
    endif()
  endif()
endif()

set(STOKER_ARROW_SOURCES_ON ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_byte_file.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_columns.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/parquet_source.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_ipc_source.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_token_column.cc)
set(STOKER_ARROW_SOURCES_OFF ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_off.cc)
if(STOKER_HAVE_ARROW)
  set(STOKER_ARROW_SOURCES ${STOKER_ARROW_SOURCES_ON})
else()
  set(STOKER_ARROW_SOURCES ${STOKER_ARROW_SOURCES_OFF})
endif()

# Adds the Arrow readers (or their kUnimplemented stand-ins) to `target`.
function(stoker_use_arrow_sources target)
  target_sources(${target} PRIVATE ${STOKER_ARROW_SOURCES})
  if(STOKER_HAVE_ARROW)
    target_link_libraries(${target} PRIVATE stoker_arrow_deps)
  endif()
endfunction()
