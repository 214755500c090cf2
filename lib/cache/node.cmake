# see CMakeLists.txt
