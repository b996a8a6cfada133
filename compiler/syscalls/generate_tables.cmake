# Generates the syscall and errno tables of bw_syscalls from the kernel's UAPI headers (cmake -P script).
#
# Inputs (-D):
#   BW_CC                C compiler, used only as a preprocessor
#   X86_64_HEADER        asm/unistd_64.h of x86_64 (Debian package linux-libc-dev)
#   AARCH64_INCLUDE_DIR  include dir holding asm/unistd.h of arm64 (Debian package linux-libc-dev-arm64-cross)
#   ERRNO_INCLUDE_DIR    include dir holding asm-generic/errno.h (Debian package linux-libc-dev)
#   OUTPUT               the C++ fragment to write, included by syscalls.cc
#
# Numbers are never parsed by hand: the preprocessor resolves them. The arm64 header is the generic table
# (asm-generic/unistd.h) behind the __ARCH_WANT_* switches that arm64's own asm/unistd.h sets, and on 64-bit it
# renames the __NR3264_* numbers (__NR_fstat is __NR3264_fstat, __NR_newfstatat is __NR3264_fstatat, ...). Running
# the header through the preprocessor with the target's include dir applies exactly what the kernel applies, and
# -undef keeps the host's predefined macros (__x86_64__, __ILP32__) from steering an arm64 header.

cmake_minimum_required(VERSION 3.25)

foreach(var BW_CC X86_64_HEADER AARCH64_INCLUDE_DIR ERRNO_INCLUDE_DIR OUTPUT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "generate_tables.cmake: -D${var}=... is required")
    endif()
endforeach()

get_filename_component(work_dir ${OUTPUT} DIRECTORY)
file(MAKE_DIRECTORY ${work_dir})

# Runs the preprocessor; the remaining arguments are passed through.
function(bw_preprocess out_var)
    execute_process(COMMAND ${BW_CC} -E -undef -nostdinc ${ARGN}
        OUTPUT_VARIABLE output ERROR_VARIABLE errors RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "generate_tables.cmake: preprocessing failed (${BW_CC} -E ${ARGN}):\n${errors}")
    endif()
    set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# Sets <prefix>_names to the names of the macros in <header> that match <name_regex> (with one capture group for
# the name to keep), and <prefix>_value_<name> to each one's value as the preprocessor resolves it.
function(bw_resolve_macros prefix header include_dir macro_prefix name_regex)
    bw_preprocess(definitions -dM -I${include_dir} ${header})
    string(REGEX MATCHALL "#define ${macro_prefix}${name_regex} " lines "${definitions}")
    set(names "")
    set(probe "#include \"${header}\"\n")
    foreach(line IN LISTS lines)
        string(REGEX REPLACE "^#define ${macro_prefix}(.*) $" "\\1" name "${line}")
        list(APPEND names ${name})
        # The name goes in a string literal so that the preprocessor leaves it alone.
        string(APPEND probe "bw_entry \"${name}\" ${macro_prefix}${name}\n")
    endforeach()
    if(names STREQUAL "")
        message(FATAL_ERROR "generate_tables.cmake: no ${macro_prefix}* macros found in ${header}")
    endif()

    set(probe_file ${work_dir}/${prefix}_probe.c)
    file(WRITE ${probe_file} "${probe}")
    bw_preprocess(resolved -P -I${include_dir} ${probe_file})
    string(REGEX MATCHALL "bw_entry \"[^\"]+\" [^\n]+" entries "${resolved}")
    foreach(entry IN LISTS entries)
        string(REGEX REPLACE "^bw_entry \"([^\"]+)\" (.+)$" "\\1" name "${entry}")
        string(REGEX REPLACE "^bw_entry \"([^\"]+)\" (.+)$" "\\2" expression "${entry}")
        # A value may be an expression: some architectures number theirs as __NR_arch_specific_syscall + n.
        math(EXPR value "${expression}")
        set(${prefix}_value_${name} ${value} PARENT_SCOPE)
    endforeach()
    list(LENGTH names name_count)
    list(LENGTH entries entry_count)
    if(NOT name_count EQUAL entry_count)
        message(FATAL_ERROR "generate_tables.cmake: ${header}: ${name_count} macros but ${entry_count} resolved values")
    endif()
    set(${prefix}_names ${names} PARENT_SCOPE)
    set(${prefix}_definitions "${definitions}" PARENT_SCOPE)
endfunction()

# __NR_syscalls (table size) and __NR_arch_specific_syscall (base of the arch-private range) are not syscalls.
set(not_syscalls syscalls arch_specific_syscall)

get_filename_component(x86_64_include_dir ${X86_64_HEADER} DIRECTORY)
bw_resolve_macros(x86_64 ${X86_64_HEADER} ${x86_64_include_dir} "__NR_" "([a-z0-9_]+)")
bw_resolve_macros(aarch64 ${AARCH64_INCLUDE_DIR}/asm/unistd.h ${AARCH64_INCLUDE_DIR} "__NR_" "([a-z0-9_]+)")

set(all_syscalls "")
foreach(arch x86_64 aarch64)
    list(REMOVE_ITEM ${arch}_names ${not_syscalls})
    # Two names with one number would mean a macro that is not a syscall slipped through.
    foreach(name IN LISTS ${arch}_names)
        set(number ${${arch}_value_${name}})
        if(DEFINED seen_${arch}_${number})
            message(FATAL_ERROR "generate_tables.cmake: ${arch}: __NR_${name} and __NR_${seen_${arch}_${number}} "
                "share number ${number}")
        endif()
        set(seen_${arch}_${number} ${name})
    endforeach()
    list(LENGTH ${arch}_names ${arch}_count)
    list(APPEND all_syscalls ${${arch}_names})
endforeach()
list(REMOVE_DUPLICATES all_syscalls)
# Byte order, as std::string_view compares: syscalls.cc binary-searches this table and checks the order.
list(SORT all_syscalls COMPARE STRING CASE SENSITIVE)
list(LENGTH all_syscalls union_count)

set(syscall_rows "")
foreach(name IN LISTS all_syscalls)
    set(row "    {\"${name}\"")
    foreach(arch x86_64 aarch64)
        if(DEFINED ${arch}_value_${name})
            string(APPEND row ", ${${arch}_value_${name}}")
        else()
            string(APPEND row ", -1")
        endif()
    endforeach()
    string(APPEND syscall_rows "${row}},\n")
endforeach()

# errno: the generic numbering, which x86_64 and arm64 both use. A name defined as another name
# (EWOULDBLOCK is EAGAIN, EDEADLOCK is EDEADLK) is an alias; errno_name() prefers the canonical one.
bw_resolve_macros(errno ${ERRNO_INCLUDE_DIR}/asm-generic/errno.h ${ERRNO_INCLUDE_DIR} "" "(E[A-Z0-9]+)")
list(SORT errno_names COMPARE STRING CASE SENSITIVE)
set(errno_rows "")
foreach(name IN LISTS errno_names)
    if(errno_definitions MATCHES "#define ${name} E[A-Z0-9]+\n")
        set(alias true)
    else()
        set(alias false)
    endif()
    string(APPEND errno_rows "    {\"${name}\", ${errno_value_${name}}, ${alias}},\n")
endforeach()
list(LENGTH errno_names errno_count)

file(WRITE ${OUTPUT} "// Generated at build time by compiler/syscalls/generate_tables.cmake; do not edit.
// x86_64:  ${x86_64_count} syscalls from ${X86_64_HEADER}
// aarch64: ${aarch64_count} syscalls from ${AARCH64_INCLUDE_DIR}/asm/unistd.h
// union:   ${union_count} names, sorted; -1 where an architecture lacks the syscall
// errno:   ${errno_count} names from ${ERRNO_INCLUDE_DIR}/asm-generic/errno.h

inline constexpr Syscall generated_syscalls[] = {
${syscall_rows}};

inline constexpr ErrnoName generated_errnos[] = {
${errno_rows}};
")
