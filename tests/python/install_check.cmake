# cmake -DBUILD=<rig build> -DWORK=<scratch> -DPYTHON=<interpreter> -DPLATLIB=<relative dir> -DEXAMPLE=<send_tensor.py> -P install_check.cmake
# Installs the build under WORK/prefix and runs the Python example against the package
# installed in the prefix's platlib (PLATLIB below it), not the build tree's.
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD}" --prefix "${WORK}/prefix"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status}):\n${out}")
endif()
if(NOT EXISTS "${WORK}/prefix/${PLATLIB}/rig/__init__.py")
  message(FATAL_ERROR "no rig package under ${WORK}/prefix/${PLATLIB}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${WORK}/prefix/${PLATLIB}" PYTHONDONTWRITEBYTECODE=1
  ${PYTHON} -c "import rig, runpy; assert rig.__file__.startswith('${WORK}/prefix'), rig.__file__; runpy.run_path('${EXAMPLE}')"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "check: tensors and checksums match")
  message(FATAL_ERROR "the installed package's example printed (${status}):\n${out}")
endif()
file(REMOVE_RECURSE "${WORK}")
