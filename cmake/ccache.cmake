# Compiler cache. A cold build of every preset (release, asan, tsan, fuzz) takes most of CI's
# time on two cores; ccache makes a rebuild of unchanged sources a copy. The cache is keyed on
# paths relative to the source tree (CCACHE_BASEDIR) and not on the build's working directory,
# so a fresh clone in another folder on the same machine hits what an earlier build stored.
# NEURON_CCACHE=OFF turns it off.
option(NEURON_CCACHE "Use ccache when it is installed" ON)
find_program(NEURON_CCACHE_PROGRAM ccache)
if(NEURON_CCACHE AND NEURON_CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
      CCACHE_MAXSIZE=16G ${NEURON_CCACHE_PROGRAM})
endif()
