# `cmake --install` and `cpack -G DEB`: the programs, the standard library of policies, the
# man pages, the shell completions and the VM runner.
#
# The destinations are fixed relative to the prefix, not GNUInstallDirs' (which would make
# lib/x86_64-linux-gnu of lib for /usr): bwc, bwrun and bwctl find the stdlib, bwvm and the
# clang module from their own executable as PREFIX/bin/../share/bumblewrap and
# PREFIX/bin/../lib/bumblewrap, so that a .deb installed to /usr works whatever prefix the
# build was configured with.

# --- man pages, rendered from docs/man/*.scd at build time ---------------------------------

find_program(BW_SCDOC scdoc)
if(NOT BW_SCDOC)
    message(FATAL_ERROR "scdoc not found: the man pages (docs/man/*.scd) are built with it; "
        "install the Debian package scdoc (scripts/install-deps.sh installs it)")
endif()
set(bw_man_pages)
foreach(page bwc.1 bwrun.1 bwctl.1 bwp.5)
    set(source ${CMAKE_SOURCE_DIR}/docs/man/${page}.scd)
    set(output ${CMAKE_BINARY_DIR}/man/${page})
    add_custom_command(OUTPUT ${output}
        COMMAND ${CMAKE_COMMAND} -DSCDOC=${BW_SCDOC} -DINPUT=${source} -DOUTPUT=${output}
            -P ${CMAKE_SOURCE_DIR}/cmake/Scdoc.cmake
        DEPENDS ${source} ${CMAKE_SOURCE_DIR}/cmake/Scdoc.cmake
        COMMENT "man page ${page}"
        VERBATIM)
    list(APPEND bw_man_pages ${output})
    string(REGEX MATCH "[0-9]$" section ${page})
    install(FILES ${output} DESTINATION share/man/man${section})
endforeach()
add_custom_target(man ALL DEPENDS ${bw_man_pages})

# --- everything else ---------------------------------------------------------------------

install(TARGETS bwc bwrun bwctl RUNTIME DESTINATION bin)
# bwc --backend=c loads it from here (compiler/backend_c/clang_compile.cc).
install(TARGETS bumblewrap-clang LIBRARY DESTINATION lib/bumblewrap)
# bwrun --vm runs bwvm from here (runtime/bwrun/vm.cc); bwvm takes its guest's init from
# beside itself.
install(PROGRAMS ${CMAKE_SOURCE_DIR}/scripts/bwvm ${CMAKE_SOURCE_DIR}/scripts/bwvm-init.sh
    DESTINATION lib/bumblewrap)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/stdlib-policies/ DESTINATION share/bumblewrap/stdlib-policies
    FILES_MATCHING PATTERN "*.bwp")
# bash-completion loads a command's completion from a file named after the command.
foreach(program bwc bwrun bwctl)
    install(FILES ${CMAKE_SOURCE_DIR}/scripts/completions/${program}.bash
        DESTINATION share/bash-completion/completions RENAME ${program})
    install(FILES ${CMAKE_SOURCE_DIR}/scripts/completions/_${program} DESTINATION share/zsh/vendor-completions)
endforeach()

# --- the .deb ------------------------------------------------------------------------------

set(BW_PACKAGE_MAINTAINER "bumblewrap maintainers <maintainers@users.noreply.a-seed-b97eeffd.example>"
    CACHE STRING "Maintainer field of the .deb that cpack -G DEB makes")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME bumblewrap)
set(CPACK_PACKAGE_CONTACT ${BW_PACKAGE_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Linux sandbox whose policy is enforced by eBPF LSM programs")
set(CPACK_PACKAGE_DESCRIPTION
    "bumblewrap runs a program in a sandbox whose every file, device, network and syscall access is
decided in the kernel, by eBPF programs in the LSM hooks, on the path the kernel resolved,
under a policy compiled ahead of time. Nothing is mounted, copied or proxied.

 - bwc checks, formats and compiles .bwp policies, and answers which rule decides an access.
 - bwrun runs a program confined by a compiled policy and names the rule behind each denial.
 - bwctl lists running sandboxes and changes their policy while they run.

Needs Linux 5.17 or later with the BPF LSM active; bwrun --vm runs the sandbox in a small
VM (qemu, Debian's kernel package) where it is not.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Depends come from the shared libraries the programs and the clang module link.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What bwvm needs (bwrun --vm), and nothing else does.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qemu-system-x86, busybox-static, cpio, xz-utils, kmod")
# The RelWithDebInfo programs are mostly debug information.
set(CPACK_STRIP_FILES ON)
include(CPack)
