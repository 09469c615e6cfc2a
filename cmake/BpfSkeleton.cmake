# bpf_skeleton(TARGET SOURCE): compiles the BPF program SOURCE (a .bpf.c) with clang and turns
# the object into a libbpf skeleton header, <name>.skel.h in the build tree (name: SOURCE
# without .bpf.c). TARGET's sources include it through bpf/<name>_skeleton.h, which makes the
# generated C header C++-clean. The object carries its own BTF (-g), which libbpf needs for
# BTF-defined maps; nothing here reads the build machine's kernel BTF, and the program uses UAPI
# types only, so the build works without /sys/kernel/btf/vmlinux and the object loads on a
# kernel without BTF.

find_program(BPF_CLANG NAMES clang-19 clang REQUIRED
             DOC "clang that targets BPF, for the BPF programs")
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED
             DOC "bpftool, to generate the BPF skeletons")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(BPF_TARGET_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(BPF_TARGET_ARCH arm64)
else()
  message(FATAL_ERROR "BPF programs: no __TARGET_ARCH for ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# -target bpf does not search the multiarch directory where Debian keeps the UAPI asm/ headers
# (asm/bpf_perf_event.h, asm/ptrace.h).
set(BPF_INCLUDE_FLAGS -I${PROJECT_SOURCE_DIR})
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(APPEND BPF_INCLUDE_FLAGS -I/usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
endif()
foreach(dir IN LISTS LIBBPF_INCLUDE_DIRS)
  list(APPEND BPF_INCLUDE_FLAGS -I${dir})
endforeach()

function(bpf_skeleton target source)
  get_filename_component(file ${source} NAME)
  string(REGEX REPLACE "\\.bpf\\.c$" "" name ${file})
  set(out_dir ${PROJECT_BINARY_DIR}/bpf_generated/bpf)
  set(object ${out_dir}/${name}.bpf.o)
  set(skeleton ${out_dir}/${name}.skel.h)
  add_custom_command(
    OUTPUT ${skeleton}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${BPF_CLANG} -target bpf -O2 -g -Wall -D__TARGET_ARCH_${BPF_TARGET_ARCH}
            ${BPF_INCLUDE_FLAGS} -c ${source} -o ${object}
    COMMAND sh -c "\"$1\" gen skeleton \"$2\" name \"$3\" > \"$4\"" sh
            ${BPFTOOL} ${object} ${name}_bpf ${skeleton}
    DEPENDS ${source} ${ARGN}
    COMMENT "BPF program and skeleton ${name}"
    VERBATIM)
  target_sources(${target} PRIVATE ${skeleton})
  target_include_directories(${target} PRIVATE ${PROJECT_BINARY_DIR}/bpf_generated)
endfunction()
