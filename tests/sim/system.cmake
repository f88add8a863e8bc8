# The simulated machine (issue 4): rig::sim's System, bus, configuration space and fault
# injection. Included from tests/sim/CMakeLists.txt.
rig_add_test(NAME sim_system_test SOURCES system_test.cpp LIBRARIES rig_sim)
rig_add_test(NAME sim_bus_test SOURCES bus_test.cpp LIBRARIES rig_sim)
rig_add_test(NAME sim_config_test SOURCES config_test.cpp LIBRARIES rig_sim)
rig_add_test(NAME sim_faults_test SOURCES faults_test.cpp LIBRARIES rig_sim_faults)
rig_add_test(NAME sim_bus_iommu_test SOURCES bus_iommu_test.cpp LIBRARIES rig_sim_faults)
