# Apache Arrow C++ (Parquet and Arrow IPC readers in src/records/arrow/) from the pyarrow wheel:
# Arrow is not packaged in Debian 12, and scripts/setup installs pyarrow into .venv. The wheel
# ships headers (pyarrow.get_include()) and libraries with versioned names only
# (libarrow.so.2600), which are linked by full path with an RPATH to their folder.
#   STOKER_ARROW=AUTO  (default) use pyarrow when the Python below imports it, else build without
#   STOKER_ARROW=ON    fail the configure when it cannot be used
#   STOKER_ARROW=OFF   build without it: Parquet and Arrow inputs fail with kUnimplemented
# The Python is STOKER_ARROW_PYTHON, else scikit-build-core's, else .venv/bin/python, else python3.
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
      set(STOKER_ARROW_PYTHON_EXECUTABLE "${_py}")  # writes the Parquet files of tests
      message(STATUS "stoker: Parquet/Arrow readers with pyarrow ${STOKER_ARROW_VERSION} (${STOKER_ARROW_LIBDIR})")
      add_library(stoker_arrow_deps INTERFACE)
      target_include_directories(stoker_arrow_deps SYSTEM INTERFACE "${_inc}")
      target_link_libraries(stoker_arrow_deps INTERFACE "${_libparquet}" "${_libarrow}")
      # The shared libraries are found through the RPATH of each binary (the build tree's own,
      # which CMake derives from the full paths) and of the Python extension (python/).
    endif()
  endif()
endif()

# The Arrow readers are a module of their own, libstoker_arrow.so, loaded with dlopen on the first
# Parquet/Arrow read (src/records/arrow_sources.cc; the seam: src/records/arrow/arrow_module.h).
# Why: pyarrow's libparquet carries its own simdjson (and more), exported, beside Debian's
# libsimdjson that stoker's tokenizer.json and JSONL readers link. Linked into every binary, both
# copies were in the process from the start and bound to each other (LD_DEBUG=bindings showed
# libparquet's simdjson calls going into Debian's copy, and a fuzz build's tokenizer reader ran
# pyarrow's). Now:
#   - no stoker binary or Python extension links Arrow: a process that reads no Parquet/Arrow
#     file never maps libarrow/libparquet;
#   - the module is opened RTLD_LOCAL (its symbols never join the process's global scope, so
#     stoker's own references cannot bind to them) and RTLD_DEEPBIND (libparquet and libarrow
#     look in their own libraries first, so they keep their simdjson); the sanitizer runtimes
#     refuse RTLD_DEEPBIND, so ASan/TSan builds open it RTLD_LOCAL only;
#   - the module holds only the readers and private copies of status.cc and byte_source.cc,
#     built with hidden visibility, -Bsymbolic and --no-undefined: one exported symbol
#     (stoker_arrow_readers_v1), nothing it needs from stoker's other code (the host hands it
#     ByteSources).
# Alternatives considered: -Bsymbolic or version scripts on stoker's side cannot change how the
# prebuilt libparquet binds (it exports its simdjson and was not linked -Bsymbolic), and Debian
# has no static libsimdjson to hide inside stoker; dlmopen would give the module a second libc and
# libstdc++, across which stoker's objects cannot pass.
# Measured (session of issue 27, `echo hi | stoker tokenize --tokenizer gpt2_small.json` under
# LD_DEBUG=bindings): before, 96 bindings from libparquet into Debian's libsimdjson and 17 of
# simdjson symbols into libparquet; after, Arrow is not mapped at all. `stoker records x.parquet`:
# 0 bindings across, libparquet's 130 simdjson references bound to its own copy. Start-up of that
# tokenize: 49 ms per run without Arrow, 79 ms with libarrow+libparquet preloaded (as linked
# before), 20 runs interleaved at load 11. A fuzz build loads the module too (uninstrumented: the
# Parquet fuzzer no longer sees coverage inside the readers' glue code).
# Test: tests/arrow_isolation_test.sh (ctest ArrowIsolation), which fails on the old link.
# Sets STOKER_HAVE_ARROW, the target stoker_arrow (the module) and stoker_use_arrow_sources(target).
if(STOKER_HAVE_ARROW)
  add_library(stoker_arrow MODULE
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_module.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_byte_file.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_columns.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_json.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/parquet_source.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_ipc_source.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/arrow_token_column.cc
    ${PROJECT_SOURCE_DIR}/src/records/arrow/parquet_table_writer.cc
    # Private copies: the module needs no other. byte_source.cc holds ByteSource's key function
    # (ViewAt), so its vtable and type_info, which the module's ByteSource users need (UBSan's
    # vptr checks among them: without it the ASan+UBSan module failed to load).
    ${PROJECT_SOURCE_DIR}/src/storage/byte_source.cc
    ${PROJECT_SOURCE_DIR}/src/common/status.cc)
  target_include_directories(stoker_arrow PRIVATE ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(stoker_arrow PRIVATE stoker_arrow_deps nlohmann_json::nlohmann_json)
  target_compile_options(stoker_arrow PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_target_properties(stoker_arrow PROPERTIES
    PREFIX "lib" OUTPUT_NAME stoker_arrow LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH "${STOKER_ARROW_LIBDIR}"
    # Installed beside the Python extension (python/CMakeLists.txt), next to pyarrow.
    INSTALL_RPATH "$ORIGIN/../pyarrow;${STOKER_ARROW_LIBDIR}")
  target_link_options(stoker_arrow PRIVATE "LINKER:-Bsymbolic" "LINKER:--exclude-libs,ALL")
  if(NOT STOKER_SANITIZE)  # the sanitizer runtimes' symbols are resolved at load time
    target_link_options(stoker_arrow PRIVATE "LINKER:--no-undefined")
  endif()
endif()

# Ties `target` (code that calls records/arrow_sources.h) to the module: where the build put it,
# and that it is built first. Without Arrow the calls fail with kUnimplemented.
function(stoker_use_arrow_sources target)
  if(STOKER_HAVE_ARROW)
    target_compile_definitions(${target} PRIVATE
      STOKER_ARROW_MODULE_BUILD_PATH="$<TARGET_FILE:stoker_arrow>")
    add_dependencies(${target} stoker_arrow)
  endif()
endfunction()
