# cmake --install: rig's libraries, their public headers, the `rig` command line and
# p2p_copy, with a package configuration so that another project's
#   find_package(rig REQUIRED)
#   target_link_libraries(app PRIVATE rig::bnxt rig::gpu_sim)
# works against the install prefix. Targets, by the names of docs/design.md's layers:
#   rig::pci rig::sim rig::space rig::gpu rig::gpu_sim rig::bnxt_hsi rig::bnxt rig::bnxt_sim rig::machines
#   rig::bootstrap
#   and rig::gpu_cuda, rig::gpu_hip where their toolchains were found at configure time.
# Test-only headers (rig/sim/faults.hpp, rig/bnxt/sim/testing/) are not installed.
include(CMakePackageConfigHelpers)

set(RIG_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rig)

# target, its name after rig::, its public header folder
set(_rig_exports
  rig_warnings warnings ""
  rig_pci pci rig/include
  rig_space space space/include
  rig_gpu gpu gpu/include
  rig_bnxt_hsi bnxt_hsi ""
  rig_bnxt bnxt nic/bnxt/include
  rig_bootstrap bootstrap bootstrap/include
  rig_sim sim rig/sim/include
  rig_gpu_sim gpu_sim gpu/sim/include
  rig_bnxt_sim bnxt_sim nic/bnxt/sim/include
  rig_machines machines machines/include)
if(TARGET rig_gpu_cuda)
  list(APPEND _rig_exports rig_gpu_cuda gpu_cuda gpu/cuda/include)
endif()
if(TARGET rig_gpu_hip)
  list(APPEND _rig_exports rig_gpu_hip gpu_hip gpu/hip/include)
endif()

set(_rig_targets "")
while(_rig_exports)
  list(POP_FRONT _rig_exports _target _name _headers)
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_name})
  list(APPEND _rig_targets ${_target})
  if(_headers)
    # Only the public headers: testing/ folders stay out.
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_headers}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
            FILES_MATCHING PATTERN "*.hpp" PATTERN "testing" EXCLUDE)
  endif()
endwhile()

install(TARGETS ${_rig_targets} EXPORT rigTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT rigTargets NAMESPACE rig:: DESTINATION ${RIG_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rigConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/rigConfig.cmake INSTALL_DESTINATION ${RIG_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/rigConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/rigConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/rigConfigVersion.cmake
  DESTINATION ${RIG_INSTALL_CMAKEDIR})
