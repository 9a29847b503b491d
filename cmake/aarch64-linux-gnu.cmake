# cmake/aarch64-linux-gnu.cmake - cross build for aarch64 Linux with Debian's cross toolchain
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross); the tests run under
# qemu-user. `./run.sh test` uses it: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)

# Return-address signing and BTI landing pads everywhere, so that the compiled code and the
# hand-written assembly are exercised the way a hardened distribution builds them; qemu's
# "max" CPU implements pointer authentication, so signed return addresses are really checked
# under emulation. (Debian 12's arm64 glibc objects carry no BTI note, so the linker does not
# mark the executables for BTI, and BTI itself is not enforced at run time.)
set(CMAKE_C_FLAGS_INIT "-mbranch-protection=standard")
set(CMAKE_CXX_FLAGS_INIT "-mbranch-protection=standard")
set(CMAKE_ASM_FLAGS_INIT "-mbranch-protection=standard")

# The cross C library lives in /usr/aarch64-linux-gnu; arm64 libraries installed the
# multiarch way (Boost.Context, Google Benchmark: `dpkg --add-architecture arm64`) live in
# /usr/lib/aarch64-linux-gnu, which CMAKE_LIBRARY_ARCHITECTURE selects under "/".
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

# add_test() runs target executables through this. pauth-impdef=on: qemu computes the
# pointer signatures with a cheap implementation-defined hash instead of the architected
# QARMA cipher, which it emulates at about a microsecond per signature; signing and checking
# stay in force (a forged resume address still fails). -L makes qemu resolve the dynamic
# loader under the cross sysroot first; LD_LIBRARY_PATH makes that loader take the cross C
# library too, rather than a multiarch libc6:arm64 of another Debian revision in
# /lib/aarch64-linux-gnu (the loader and its libc must come from one build).
set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64;-cpu;max,pauth-impdef=on;-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
