# CUDA is optional at build time (STOKER_CUDA=AUTO|ON|OFF) and detected at run time.
# With CUDA, src/cuda/*.cu are compiled into the library and STOKER_HAVE_CUDA is defined;
# without it, src/cuda/*_stub.cc provide the same private interface reporting "no device".
set(STOKER_HAVE_CUDA OFF)
if(NOT STOKER_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(STOKER_HAVE_CUDA ON)
  elseif(STOKER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STOKER_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "stoker: CUDA copier ${STOKER_HAVE_CUDA}")

function(stoker_add_cuda target)
  file(GLOB _cu CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cuda/*.cu)
  if(STOKER_HAVE_CUDA AND _cu)
    # The target already exists, so CMAKE_CUDA_STANDARD would not reach it; nvcc's .cu files only
    # need C++17 (the library's C++20 would otherwise be asked of nvcc too).
    set_property(TARGET ${target} PROPERTY CUDA_STANDARD 17)
    set_property(TARGET ${target} PROPERTY CUDA_STANDARD_REQUIRED ON)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
      set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES 80 90)
    endif()
    target_sources(${target} PRIVATE ${_cu})
    target_compile_definitions(${target} PRIVATE STOKER_HAVE_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
endfunction()
