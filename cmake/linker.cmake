# Linker: LLVM's lld when installed (Debian's lld, which scripts/setup-deps.sh installs). GNU ld
# takes ~8 s per test binary with debug info on two cores, lld under 2: over the ~100 binaries
# of a build that is minutes of every CI run, cold or warm (ccache caches compiles, not links).
# NEURON_LLD=OFF keeps the compiler's default linker.
option(NEURON_LLD "Link with lld when it is installed" ON)
find_program(NEURON_LLD_PROGRAM ld.lld)
if(NEURON_LLD AND NEURON_LLD_PROGRAM)
  add_link_options(-fuse-ld=lld)
endif()
