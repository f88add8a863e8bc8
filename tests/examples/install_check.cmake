# cmake -DBUILD=<rig build> -DCONSUMER=<consumer/> -DWORK=<scratch> -DGENERATOR=Ninja -P install_check.cmake
# Installs the build under WORK/prefix, builds the consumer project against it with
# find_package(rig), runs it, and fails unless it printed that the checksums match.
file(REMOVE_RECURSE "${WORK}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ARGN}\nfailed (${status}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix")
run(${CMAKE_COMMAND} -S "${CONSUMER}" -B "${WORK}/build" -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
run(${CMAKE_COMMAND} --build "${WORK}/build")
run("${WORK}/build/send_gpu_memory")
if(NOT out MATCHES "1048576 bytes GPU to GPU, checksums match")
  message(FATAL_ERROR "the consumer printed:\n${out}")
endif()
file(REMOVE_RECURSE "${WORK}")
