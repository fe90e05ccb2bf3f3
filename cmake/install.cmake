# Install rules: the library (versioned soname when shared), the public headers, the CLI
# when built, the CMake package (kernc::kernc) and kernc.pc. The device templates are
# embedded in the library at build time (cmake/embed_templates.cmake): nothing else is
# needed at run time.
include(CMakePackageConfigHelpers)

set(KERNC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kernc)

install(TARGETS kernc EXPORT kerncTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kernc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
if(KERNC_BUILD_CLI)
  install(TARGETS kernc_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

install(EXPORT kerncTargets NAMESPACE kernc:: DESTINATION ${KERNC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kerncConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kerncConfig.cmake INSTALL_DESTINATION ${KERNC_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same minor version is compatible
# (and the soname carries the minor version: NOTE [ soname ] in src/CMakeLists.txt).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kerncConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kerncConfig.cmake ${PROJECT_BINARY_DIR}/kerncConfigVersion.cmake
  DESTINATION ${KERNC_CMAKE_DIR})

# pkg-config: a static kernc also needs its private dependencies on the link line.
if(KERNC_LIBRARY_TYPE STREQUAL "STATIC")
  set(KERNC_PC_CFLAGS "-DKERNC_STATIC=1")
  set(KERNC_PC_LIBS_PRIVATE "-lspdlog -lfmt -lcrypto -pthread -ldl")
else()
  set(KERNC_PC_CFLAGS "")
  set(KERNC_PC_LIBS_PRIVATE "")
endif()
# Relocatable where the install dirs are relative: the prefix is found from where kernc.pc
# lies (LIBDIR/pkgconfig), as many levels up as LIBDIR has, so that lib/x86_64-linux-gnu
# works as lib does and `cmake --install --prefix` may move the tree. Absolute install dirs
# are written as they are.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(KERNC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(KERNC_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(KERNC_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH kernc_pc_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" kernc_pc_up "${kernc_pc_up}")
  set(KERNC_PC_PREFIX "\${pcfiledir}/${kernc_pc_up}")
  set(KERNC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(KERNC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/kernc.pc.in ${PROJECT_BINARY_DIR}/kernc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kernc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
