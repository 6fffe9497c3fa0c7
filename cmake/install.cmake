# `cmake --install <build> --prefix P` installs the library part of slaterlab
# for QMC codes to link (docs/library.md):
#   P/include/slaterlab/{reference,strategies}/...   the headers
#   P/include/slaterlab/kernel.h                      the C ABI of external kernels
#   P/lib/libslaterlab_*.a                            the static libraries
#   P/lib/cmake/slaterlab/                            find_package(slaterlab)
#   P/lib/pkgconfig/slaterlab.pc                      pkg-config
#   P/bin/slaterlab                                   the command line
# verify/ is the command line's own composition and is not installed as a
# library: its libraries would drag HDF5, fmt, toml++, RapidCheck and Google
# Benchmark into every consumer.
include(CMakePackageConfigHelpers)

set(SLATERLAB_EXPORTED_LIBRARIES reference cuda determinant orbitals sampling)
set(SLATERLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/slaterlab)

list(TRANSFORM SLATERLAB_EXPORTED_LIBRARIES PREPEND slaterlab_ OUTPUT_VARIABLE exported_targets)
install(TARGETS ${exported_targets} slaterlab_strategies EXPORT slaterlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS slaterlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(folder IN LISTS SLATERLAB_LIBRARY_FOLDERS)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${folder}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/slaterlab
          FILES_MATCHING PATTERN "*.hpp")
endforeach()

install(FILES ${CMAKE_SOURCE_DIR}/include/slaterlab/kernel.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/slaterlab)

install(EXPORT slaterlabTargets NAMESPACE slaterlab:: DESTINATION ${SLATERLAB_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/slaterlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/slaterlabConfig.cmake INSTALL_DESTINATION ${SLATERLAB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/slaterlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor version may break the interface
install(FILES ${CMAKE_BINARY_DIR}/slaterlabConfig.cmake
              ${CMAKE_BINARY_DIR}/slaterlabConfigVersion.cmake
              ${CMAKE_SOURCE_DIR}/cmake/FindArb.cmake
        DESTINATION ${SLATERLAB_CMAKE_DIR})

# pkg-config: the static libraries in link order, then what they link.
# Arb and FLINT ship no .pc file, so they are named by their libraries.
set(SLATERLAB_PC_LIBS "")
foreach(library ${ARB_LIBRARY} ${FLINT_LIBRARY})
  get_filename_component(dir ${library} DIRECTORY)
  get_filename_component(file ${library} NAME_WE)
  string(REGEX REPLACE "^lib" "" file ${file})
  string(APPEND SLATERLAB_PC_LIBS " -L${dir} -l${file}")
endforeach()
if(SLATERLAB_HAVE_CUDA)  # slaterlab_cuda's own links (CUDA::cublas, CUDA::cudart)
  string(APPEND SLATERLAB_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart")
endif()
if(SLATERLAB_SANITIZE)  # as the targets' link options
  list(JOIN SLATERLAB_SANITIZE_FLAGS " " flags)
  string(APPEND SLATERLAB_PC_LIBS " ${flags}")
endif()
# The prefix is found from the file's own place, so that --prefix at install
# time is honoured.
file(RELATIVE_PATH SLATERLAB_PC_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_SOURCE_DIR}/cmake/slaterlab.pc.in ${CMAKE_BINARY_DIR}/slaterlab.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/slaterlab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
