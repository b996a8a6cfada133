# Compiles BPF C with clang 19 at build time and embeds objects into C++ targets.
find_program(BW_BPF_CLANG NAMES clang-19 PATHS /usr/lib/llvm-19/bin REQUIRED)
find_program(BW_LLVM_STRIP NAMES llvm-strip-19 llvm-strip PATHS /usr/lib/llvm-19/bin REQUIRED)

# bw_bpf_object(<out-var> SOURCE <file.bpf.c> [DEPENDS headers...])
# Produces ${CMAKE_CURRENT_BINARY_DIR}/<name>.bpf.o with DWARF stripped and BTF kept.
function(bw_bpf_object out_var)
    cmake_parse_arguments(ARG "" "SOURCE" "DEPENDS" ${ARGN})
    get_filename_component(name ${ARG_SOURCE} NAME_WE)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
    add_custom_command(
        OUTPUT ${obj}
        COMMAND ${BW_BPF_CLANG} -target bpf -O2 -g -Wall -Werror
                -D__TARGET_ARCH_x86 -mcpu=v3
                -I${CMAKE_SOURCE_DIR}/bpf-templates
                -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE}
                -c ${ARG_SOURCE} -o ${obj}.tmp
        COMMAND ${BW_LLVM_STRIP} -g ${obj}.tmp -o ${obj}
        COMMAND ${CMAKE_COMMAND} -E remove ${obj}.tmp
        DEPENDS ${ARG_SOURCE} ${ARG_DEPENDS}
        COMMENT "BPF ${name}.bpf.c"
        VERBATIM)
    set(${out_var} ${obj} PARENT_SCOPE)
endfunction()

# bw_embed_file(<target> FILE <path> SYMBOL <c-identifier>)
# Adds a generated source defining `extern const std::span<const std::byte> <SYMBOL>`.
function(bw_embed_file target)
    cmake_parse_arguments(ARG "" "FILE;SYMBOL" "" ${ARGN})
    set(out ${CMAKE_CURRENT_BINARY_DIR}/embed_${ARG_SYMBOL}.cc)
    add_custom_command(
        OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -DINPUT=${ARG_FILE} -DOUTPUT=${out} -DSYMBOL=${ARG_SYMBOL}
                -P ${CMAKE_SOURCE_DIR}/cmake/EmbedFile.cmake
        DEPENDS ${ARG_FILE} ${CMAKE_SOURCE_DIR}/cmake/EmbedFile.cmake
        COMMENT "embedding ${ARG_SYMBOL}"
        VERBATIM)
    target_sources(${target} PRIVATE ${out})
endfunction()
