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
# 0.x: a minor release may change the API, so only the same minor version is compatible.
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
configure_file(${PROJECT_SOURCE_DIR}/cmake/kernc.pc.in ${PROJECT_BINARY_DIR}/kernc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kernc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
