# Function, the local VFIO path and their internal pieces (issue 4). Included from
# tests/pci/CMakeLists.txt.
rig_add_test(NAME pci_function_test SOURCES function_test.cpp LIBRARIES rig_pci rig_sim)
rig_add_test(NAME pci_function_transport_test SOURCES function_transport_test.cpp LIBRARIES rig_sim_faults)
# The local VFIO path through its seam (rig/src/vfio_kernel.hpp): internal headers.
rig_add_test(NAME pci_vfio_test SOURCES vfio_test.cpp LIBRARIES rig_pci_internal rig_sim)
rig_add_test(NAME pci_range_allocator_test SOURCES range_allocator_test.cpp LIBRARIES rig_pci_internal)
