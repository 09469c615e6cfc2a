#!/usr/bin/env python3
"""Writes the hand-made inputs of tests/fuzz/regressions/<target>/: for each bug the first
fuzzing pass found (and the same classes found by reading the other parsers), the smallest input
that shows it, and for every target at least one small valid seed, so that no target's replay
runs on nothing. Deterministic: everything is assembled here byte by byte from the formats'
specifications (ELF, DWARF 4 and 5, perf.data, zstd), nothing is compiled or recorded.

    tests/fuzz/make_regressions.py [DIR]     (default: tests/fuzz/regressions beside this file)

Inputs fuzzing found are added by tests/fuzz/run.sh under their content hash; this script
leaves them alone and rewrites only the files it names.
"""
import os
import struct
import sys

PART_SEPARATOR = b"\n--- profcollect fuzz part ---\n"

# ---- Arm SPE --------------------------------------------------------------------------------


def spe_address(index, payload, extended=False):
    """An address packet: 0b10110iii (or 0b001000ii 0b10110iii), 8-byte payload."""
    header = bytes([0x20 | (index >> 3), 0xB0 | (index & 7)]) if extended else bytes([0xB0 | index])
    return header + struct.pack("<Q", payload)


def spe_code_address(address, el, ns=1):
    return address | (el << 61) | (ns << 63)


# A taken conditional branch (TIMESTAMP end, extended headers), a kernel store with data
# addresses (END end), padding, an "other" operation with a data source and a context.
SPE_RECORDS = (
    spe_address(0, spe_code_address(0x400100, 0), True) + b"\x20\x99\x03\x00" + b"\x98\x07\x00" +
    b"\x52\x82\x00" + b"\x4a\x01" + spe_address(1, spe_code_address(0x400200, 0), True) +
    b"\x64" + struct.pack("<I", 42) + b"\x71" + struct.pack("<Q", 1000) +
    spe_address(0, spe_code_address(0xFFFF800008001000, 1)) + b"\x9a\x02\x00" + b"\x52\x1e\x00" +
    b"\x49\x01" + spe_address(2, 0x5A00FFFF12345678) + spe_address(3, 0x8812345678) + b"\x01" +
    b"\x00\x00\x00" +
    spe_address(0, spe_code_address(0x400108, 0)) + b"\x48\x00" + b"\x43\x02" + b"\x65" +
    struct.pack("<I", 7) + b"\x71" + struct.pack("<Q", 2000))

# ---- ELF ---------------------------------------------------------------------------------------

SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 1, 2, 3, 4
SHF_ALLOC, SHF_EXECINSTR = 2, 4
STT_FUNC, STB_GLOBAL = 2, 1
BASE = 0x400000
# push rbp; mov rbp, rsp; nop; nop; pop rbp; ret; then int3 padding.
CODE = bytes([0x55, 0x48, 0x89, 0xE5, 0x90, 0x90, 0x5D, 0xC3]) + b"\xcc" * 8


class Strings:
    def __init__(self):
        self.data = b"\0"

    def add(self, s):
        at = len(self.data)
        self.data += s.encode() + b"\0"
        return at


def elf(sections, symbols):
    """An x86-64 ET_EXEC with one R+X PT_LOAD over the whole file at BASE.

    sections: (name, type, flags, bytes, entsize) after the null section; allocated ones get
    the address BASE + their file offset. symbols: (name, section name, offset in it, size),
    FUNC and GLOBAL. Returns (bytes, {section name: address})."""
    shstr = Strings()
    strtab = Strings()
    layout = []  # (name, type, flags, bytes, entsize, offset)
    offset = 64 + 56
    for name, stype, flags, data, entsize in sections:
        offset = (offset + 15) & ~15
        layout.append([name, stype, flags, data, entsize, offset])
        offset += len(data)
    addresses = {s[0]: BASE + s[5] for s in layout}
    index = {s[0]: i + 1 for i, s in enumerate(layout)}
    syms = b"\0" * 24
    for name, section, at, size in symbols:
        syms += struct.pack("<IBBHQQ", strtab.add(name), (STB_GLOBAL << 4) | STT_FUNC, 0,
                            index[section], addresses[section] + at, size)
    symtab_index = len(layout) + 1
    for name, stype, data, entsize, link in ((".symtab", SHT_SYMTAB, syms, 24, symtab_index + 1),
                                            (".strtab", SHT_STRTAB, strtab.data, 0, 0)):
        offset = (offset + 15) & ~15
        layout.append([name, stype, 0, data, entsize, offset, link])
        offset += len(data)
    shstr_names = [shstr.add(s[0]) for s in layout]
    shstrtab_name = shstr.add(".shstrtab")
    shstr_offset = offset
    offset += len(shstr.data)
    shoff = (offset + 7) & ~7
    shnum = len(layout) + 2
    out = bytearray(shoff + 64 * shnum)
    struct.pack_into("<16sHHIQQQIHHHHHH", out, 0, b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1,
                     addresses.get(".text", BASE), 64, shoff, 0, 64, 56, 1, 64, shnum, shnum - 1)
    struct.pack_into("<IIQQQQQQ", out, 64, 1, 5, 0, BASE, BASE, len(out), len(out), 0x1000)
    for entry in layout:
        out[entry[5]:entry[5] + len(entry[3])] = entry[3]
    out[shstr_offset:shstr_offset + len(shstr.data)] = shstr.data
    for i, entry in enumerate(layout):
        name, stype, flags, data, entsize, off = entry[:6]
        link = entry[6] if len(entry) > 6 else 0
        info = 1 if stype == SHT_SYMTAB else 0  # every symbol after the null one is global
        addr = BASE + off if flags & SHF_ALLOC else 0
        struct.pack_into("<IIQQQQIIQQ", out, shoff + 64 * (i + 1), shstr_names[i], stype, flags,
                         addr, off, len(data), link, info, 16 if flags & SHF_EXECINSTR else 1,
                         entsize)
    struct.pack_into("<IIQQQQIIQQ", out, shoff + 64 * (shnum - 1), shstrtab_name, SHT_STRTAB, 0, 0,
                     shstr_offset, len(shstr.data), 0, 0, 1, 0)
    return bytes(out), addresses


# ---- DWARF ---------------------------------------------------------------------------------------

def uleb(v):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        done = (v == 0 and not byte & 0x40) or (v == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def line_program(program, version=4):
    """A .debug_line unit (32-bit DWARF) with one file, a.c, around `program`'s opcodes."""
    lengths = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    params = bytes([1]) + (bytes([1]) if version >= 4 else b"") + bytes([1, 0xFB, 14, 13]) + lengths
    if version >= 5:
        # directory and file entry formats: DW_LNCT_path as DW_FORM_string
        tables = bytes([1]) + uleb(1) + uleb(0x08) + uleb(1) + b"/\0"
        tables += bytes([1]) + uleb(1) + uleb(0x08) + uleb(1) + b"a.c\0"
        head = struct.pack("<H", version) + bytes([8, 0])
    else:
        tables = b"\0" + b"a.c\0" + uleb(0) + uleb(0) + uleb(0) + b"\0"
        head = struct.pack("<H", version)
    header = params + tables
    body = head + struct.pack("<I", len(header)) + header + program
    return struct.pack("<I", len(body)) + body


def set_address(a):
    return b"\0" + uleb(9) + b"\x02" + struct.pack("<Q", a)


END_SEQUENCE = b"\0" + uleb(1) + b"\x01"
COPY = b"\x01"


def advance_pc(n):
    return b"\x02" + uleb(n)


def advance_line(n):
    return b"\x03" + sleb(n)


def debug_sections(text_addr, functions, line):
    """.debug_abbrev and .debug_info of one DWARF 4 compile unit over [text_addr, +16) whose
    subprograms are `functions` (name, offset, size); its line table is `line` at offset 0."""
    abbrev = (uleb(1) + uleb(0x11) + b"\x01" +          # compile_unit, children
              uleb(0x03) + uleb(0x08) + uleb(0x11) + uleb(0x01) + uleb(0x12) + uleb(0x07) +
              uleb(0x10) + uleb(0x17) + b"\0\0" +
              uleb(2) + uleb(0x2E) + b"\0" +              # subprogram, no children
              uleb(0x03) + uleb(0x08) + uleb(0x11) + uleb(0x01) + uleb(0x12) + uleb(0x07) +
              uleb(0x3B) + uleb(0x0B) + b"\0\0" + b"\0")
    dies = uleb(1) + b"a.c\0" + struct.pack("<QQI", text_addr, 16, 0)
    for name, at, size in functions:
        dies += uleb(2) + name.encode() + b"\0" + struct.pack("<QQB", text_addr + at, size, 1)
    dies += b"\0"
    unit = struct.pack("<HIB", 4, 0, 8) + dies
    info = struct.pack("<I", len(unit)) + unit
    return [(".debug_abbrev", SHT_PROGBITS, 0, abbrev, 0), (".debug_info", SHT_PROGBITS, 0, info, 0),
            (".debug_line", SHT_PROGBITS, 0, line, 0)]


def main_line_table(text_addr):
    return line_program(set_address(text_addr) + COPY + advance_pc(4) + advance_line(1) + COPY +
                        advance_pc(4) + END_SEQUENCE)


def binary_with_far_symbol(with_dwarf):
    """A symbol whose value lies 1 GiB past its section: the sweep from the symbol before it
    must end at the section's end, not decode up to the far one."""
    text = [(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, CODE, 0)]
    symbols = [("main", ".text", 0, 8), ("far", ".text", 1 << 30, 0)]
    _, addresses = elf(text, symbols)
    extra = debug_sections(addresses[".text"], [("main", 0, 8)],
                           main_line_table(addresses[".text"])) if with_dwarf else []
    return elf(text + extra, symbols)[0]


def binary_with_unreadable_code():
    """An executable section whose bytes libelf refuses (SHT_RELA whose size is no multiple of
    its 24-byte entries), with a function in it: BOLT's block map must find no bytes, not
    disassemble from a null pointer."""
    sections = [(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, CODE, 0),
                (".badx", SHT_RELA, SHF_ALLOC | SHF_EXECINSTR, CODE[:10], 24)]
    return elf(sections, [("main", ".text", 0, 8), ("bad", ".badx", 0, 10)])[0]


def minimal_binary(with_dwarf):
    text = [(".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, CODE, 0)]
    symbols = [("main", ".text", 0, 8), ("pad", ".text", 8, 8)]
    _, addresses = elf(text, symbols)
    extra = debug_sections(addresses[".text"], [("main", 0, 8), ("pad", 8, 8)],
                           main_line_table(addresses[".text"])) if with_dwarf else []
    return elf(text + extra, symbols)[0]


# ---- perf.data -----------------------------------------------------------------------------------

PERF_MAGIC = b"PERFILE2"
IP, TID, TIME, ID, CPU, PERIOD, RAW, BRANCH_STACK = 1, 2, 4, 64, 128, 256, 1024, 2048
SAMPLE_ID_ALL = 1 << 18


def attr(sample_type, flags=SAMPLE_ID_ALL, branch_sample_type=0):
    """perf_event_attr, 112 bytes (PERF_ATTR_SIZE_VER5): cpu-clock, period 10000."""
    a = bytearray(112)
    struct.pack_into("<IIQQQQQ", a, 0, 1, 112, 0, 10000, sample_type, 0, flags)
    struct.pack_into("<Q", a, 72, branch_sample_type)
    return bytes(a)


def record(rtype, body, misc=2):
    size = 8 + len(body)
    return struct.pack("<IHH", rtype, misc, size) + body


def trailer(pid=7, time=1000):
    """sample_id_all trailer for TID|TIME."""
    return struct.pack("<IIQ", pid, pid, time)


def mmap2(pid, start, length, pgoff, filename, time):
    name = filename.encode() + b"\0"
    name += b"\0" * (-len(name) % 8)
    body = struct.pack("<IIQQQIIQQII", pid, pid, start, length, pgoff, 8, 1, 42, 0, 5, 2) + name
    return record(10, body + trailer(pid, time))


def comm(pid, name, time):
    n = name.encode() + b"\0"
    n += b"\0" * (-len(n) % 8)
    return record(3, struct.pack("<II", pid, pid) + n + trailer(pid, time), misc=0x2000)


def sample(pid, ip, time, period=10000):
    return record(9, struct.pack("<QIIQQ", ip, pid, pid, time, period))


def seed_records():
    return (comm(7, "hot", 100) + mmap2(7, 0x555555554000, 0x2000, 0, "/usr/bin/hot", 200) +
            sample(7, 0x555555554100, 300) + sample(7, 0x555555555010, 400) +
            record(68, b""))  # FINISHED_ROUND


def raw_unaligned_empty_branch_sample():
    """IP|TID|TIME|RAW|BRANCH_STACK with a 1-byte RAW payload: the branch count and its (zero)
    entries start 5 bytes off 8-byte alignment."""
    body = struct.pack("<QIIQ", 0x401000, 7, 7, 500) + struct.pack("<I", 1) + b"\xaa"
    body += struct.pack("<Q", 0)  # nr = 0
    body += b"\0" * (-(8 + len(body)) % 8)
    return record(9, body)


def perf_data_file(attr_bytes, records, features=()):
    """A file-mode perf.data: header, one attr (without ids), the data section, then the
    feature sections `features` ((bit, bytes), in bit order)."""
    attrs_off = 104
    attr_entry = attr_bytes + struct.pack("<QQ", 0, 0)
    data_off = attrs_off + len(attr_entry)
    bitmap = bytearray(32)
    for bit, _ in features:
        bitmap[bit // 8] |= 1 << (bit % 8)
    header = PERF_MAGIC + struct.pack("<QQQQQQQQ", 104, len(attr_entry), attrs_off, len(attr_entry),
                                      data_off, len(records), 0, 0) + bytes(bitmap)
    out = header + attr_entry + records
    table_off = len(out)
    section_off = table_off + 16 * len(features)
    table = b""
    sections = b""
    for _, data in features:
        table += struct.pack("<QQ", section_off + len(sections), len(data))
        sections += data
    return out + table + sections


def perf_data_pipe(attr_bytes, records):
    header_attr = record(64, attr_bytes, misc=0)  # HEADER_ATTR without ids
    return PERF_MAGIC + struct.pack("<Q", 16) + header_attr + records


def event_desc_ids_past_section():
    """HEADER_EVENT_DESC naming one id that the section does not hold."""
    name = b"cpu-clock\0" + b"\0" * 6
    desc = struct.pack("<II", 1, 0) + struct.pack("<I", 1) + struct.pack("<I", len(name)) + name
    return desc


def zstd_rle_bomb(record_size=65528):
    """A COMPRESSED record whose zstd frame is only run-length blocks of 128 KiB: 4 bytes each,
    so 64 KiB of record would make 2 GiB. The reader must stop at its limit."""
    frame = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x38])  # no size, 128 KiB window
    blocks = (record_size - 8 - len(frame)) // 4
    for i in range(blocks):
        last = 1 if i == blocks - 1 else 0
        header = (131072 << 3) | (1 << 1) | last
        frame += struct.pack("<I", header)[:3] + b"\x55"
    body = frame + b"\0" * (record_size - 8 - len(frame))
    return record(81, body, misc=0)


# ---- live ring buffer ----------------------------------------------------------------------------

def ring_prefix(sample_type, exponent=0, start=0, sample_id_all=True, branch_sample_type=0):
    """live_ring_buffer_fuzz's fixed fields: data size 64 << exponent, the attr, the start."""
    return (struct.pack("<BQBIQQB", exponent, sample_type, 0, branch_sample_type, 0, 0,
                        1 if sample_id_all else 0) + struct.pack("<Q", start))


def ring_write(data):
    return struct.pack("<BH", 0, len(data)) + data


def ring_set_head(head):
    return struct.pack("<BH", 2, 0) + struct.pack("<Q", head)


# ---- text files ----------------------------------------------------------------------------------

PERF_SCRIPT = b"""\
 PERF_RECORD_MMAP2 7/7: [0x555555554000(0x2000) @ 0 08:01 42 0]: r-xp /usr/bin/hot
 PERF_RECORD_MMAP2 7/7: [0x7f0000000000(0x1000) @ 0x1000 <0123456789abcdef0123456789abcdef01234567>]: r-xp /usr/lib/libc.so.6
 PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1000000) @ 0xffffffff81000000]: x [kernel.kallsyms]_text
           555555554100 0x555555554120/0x555555554100/P/-/-/3  0x555555554130/0x555555554110/M/X/A/7/COND/
     7/7 cpu-clock:  555555555010
 ffffffff81000100
"""

PROC_MAPS = b"""\
55d0c1a00000-55d0c1a21000 r-xp 00002000 fd:01 1054742                    /usr/bin/cat
55d0c1a21000-55d0c1a22000 rw-p 00023000 fd:01 1054742                    /usr/bin/my prog\\012name (deleted)
7ffd3c9e1000-7ffd3ca02000 rw-p 00000000 00:00 0                          [stack]
7f0000000000-7f0000001000 ---s 00000000 00:05 7
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
"""

FDATA = b"""\
no_lbr cpu-clock:
1 main 10 5
1 step/1 0 3
1 name\\ with\\ spaces 2c 1
"""

BRANCH_SAMPLES = b"""\
# profcollect branch samples 1
stacks 2
B 401126 401100 - 12 1
B 0 401100 f 2 0
F 401100 401126 12
f 401100 40111f 2
R 401100 401126 9
T x 401100 2
"""

META = b"""{
  "path": "/usr/bin/fuzzed",
  "build_id": "00112233445566778899aabbccddeeff00112233",
  "samples": 8,
  "first_sample_ns": 1000,
  "last_sample_ns": 2000,
  "event": "cpu-clock",
  "bolt_fdata": "no_lbr"
}
"""

COLLECTION = b"""{"event": "cpu-clock", "frequency_hz": 4000, "samples": 8, "lost": 0,
 "unmapped": {"kernel": 1}, "start_ns": 1000, "end_ns": 3000}
"""


# Every key of the daemon's configuration (systemd/profcollect.toml.example), none at its default.
DAEMON_CONFIG = b"""\
output_dir = "/var/lib/profcollect-test"
socket = "/run/profcollect-test/ctl"
event = "cpu-clock"
frequency = 999
branch_stacks = false
flush_interval = "30s"
final_flush_timeout = 2
schedule = { on = "2s", every = "10min" }
binaries = ['^/usr/bin/', '\\.so$']
exclude = ["/tmp/"]
kernel = true
max_disk_mb = 0.5
retention_days = 7
engine = "bpf"
allowed_group = ""
mmap_pages = 64
backlog_mb = 32
"""

# One line per request, as `profcollect ctl` sends them, then what a peer may send instead: not
# JSON, JSON that is not an object, a command of the wrong type, and a last line cut short.
CONTROL_REQUESTS = b"""\
{"cmd": "status"}
{"cmd": "flush"}
{"cmd": "reload"}
{"cmd": "kernel", "duration": 2.5}
{"cmd": "kernel", "duration": 1e300}
{"cmd": "kernel"}
{"cmd": "throw"}
{"cmd": 7}
not json
[1, 2]

{"cmd": "status"
"""[:-1]


def bpf_counts_intervals():
    """Operations of tests/fuzz/bpf_counts_fuzz.cpp: an interval in which process 1 maps a file
    and is counted in it, then one in which it maps another file over it and execs."""
    def mmap(pid, page, pages, pgoff, file, executable=True):
        return bytes([0, pid - 1, page, pages, pgoff, file | (0x80 if executable else 0)])

    def count(tgid, ip, n, near=True):
        return bytes([0x84 if near else 4, 0]) + struct.pack("<IIQQ", tgid - 1, 0, ip, n)

    end = bytes([5, 0])
    return (mmap(1, 0x40, 4, 0, 0) + mmap(1, 0x80, 2, 1, 1) + count(1, 0x40123, 7) +
            count(1, 0x80010, 2) + count(1, 0x90000, 1) + count(1, 0xFFFFFFFF81000000, 3, False) + end +
            mmap(1, 0x40, 1, 0, 1) + bytes([1, 0]) + count(1, 0x40123, 4) + bytes([2, 1, 0]) +
            count(2, 0x80010, 1) + bytes([3, 1, 1]) + end)


# BOLT's pre-aggregated profile (output/preagg_reader.h) and an LLVM sample profile in text form
# (output/sample_profile_reader.h), as the profile store writes them.
PREAGG = b"""\
B 401126 401100 12 1
B X:7fff0000 401100 2 0
F 401100 401126 12
f 401100 40111f 2
"""

AUTOFDO = b"""\
main:120:3
 1: 3
 2: 50 work:40
 3: work:60
  1: 60
work:40:0
 1: 40
"""


def eh_frame():
    """A CIE (augmentation zR, pcrel|sdata4 pointers) and one FDE over 16 bytes."""
    cie_body = struct.pack("<I", 0) + b"\x01" + b"zR\0" + uleb(1) + sleb(-8) + uleb(16)
    cie_body += uleb(1) + b"\x1b" + b"\x0c\x07\x08\x90\x01"
    cie_body += b"\0" * (-(4 + len(cie_body)) % 4)
    cie = struct.pack("<I", len(cie_body)) + cie_body
    fde_body = struct.pack("<I", len(cie) + 4) + struct.pack("<ii", -0x100, 16) + uleb(0)
    fde_body += b"\0" * (-(4 + len(fde_body)) % 4)
    fde = struct.pack("<I", len(fde_body)) + fde_body
    return b"\x01" + cie + fde + struct.pack("<I", 0)


# ---- LLVM basic-block address map ----------------------------------------------------------------


def bb_block(bid, gap, size, metadata, version=2):
    """A block: ID (version 2 only), offset from the previous block's end (from the range's start
    in version 0), size, metadata (1 return, 2 tail call, 4 EH pad, 8 fall through, 16 indirect)."""
    return (uleb(bid) if version >= 2 else b"") + uleb(gap) + uleb(size) + uleb(metadata)


def bb_addr_map(address_size=8, big_endian=False):
    """bb_addr_map_fuzz's input: the encoding byte, then a section of four functions -- versions 0
    and 1, a version 2 one with two ranges and every PGO feature, and one with an entry count."""
    order = ">" if big_endian else "<"
    addr = lambda a: struct.pack(order + ("Q" if address_size == 8 else "I"), a)
    section = b"\x00\x00" + addr(0x1000) + uleb(2) + bb_block(0, 0, 4, 8, 0) + bb_block(1, 6, 6, 1, 0)
    section += b"\x01\x00" + addr(0x1020) + uleb(2) + bb_block(0, 0, 3, 0x18, 1) + bb_block(1, 1, 5, 4, 1)
    section += b"\x02\x0f" + uleb(2)
    section += addr(0x1040) + uleb(2) + bb_block(0, 0, 8, 8) + bb_block(3, 0, 4, 16)
    section += addr(0x1080) + uleb(1) + bb_block(1, 2, 16, 3)
    section += uleb(1000)  # entry count, then per block: frequency, successors (ID, probability)
    section += uleb(4096) + uleb(2) + uleb(3) + uleb(0x60000000) + uleb(1) + uleb(0x20000000)
    section += uleb(3072) + uleb(1) + uleb(1) + uleb(0x80000000)
    section += uleb(1024) + uleb(0)
    section += b"\x02\x01" + addr(0x10a0) + uleb(1) + bb_block(0, 0, 6, 1) + uleb(12345678901234)
    return bytes([(1 if address_size == 4 else 0) | (2 if big_endian else 0)]) + section


# ---- the files -----------------------------------------------------------------------------------

def inputs():
    seed_attr = attr(IP | TID | TIME | PERIOD)
    raw_attr = attr(IP | TID | TIME | RAW | BRANCH_STACK)
    raw_sample = raw_unaligned_empty_branch_sample()
    seed_file = perf_data_file(seed_attr, seed_records())
    yield "elf_binary_fuzz", "seed_minimal", minimal_binary(False)
    yield "elf_binary_fuzz", "symbol_past_section", binary_with_far_symbol(False)
    yield "elf_binary_fuzz", "unreadable_executable_section", binary_with_unreadable_code()
    yield "dwarf_fuzz", "seed_minimal", minimal_binary(True)
    yield "dwarf_fuzz", "symbol_past_section", binary_with_far_symbol(True)
    yield "dwarf_line_table_fuzz", "seed_dwarf4", main_line_table(0x401000)
    yield "dwarf_line_table_fuzz", "seed_dwarf5", line_program(
        set_address(0x401000) + COPY + advance_pc(8) + END_SEQUENCE, version=5)
    # An extended opcode whose length wraps the offset of the next opcode back onto the opcode
    # itself: 0, a 10-byte ULEB128 length, then the sub-opcode; 1 + 10 + length = 2^64.
    yield "dwarf_line_table_fuzz", "extended_opcode_huge_length", line_program(
        set_address(0x401000) + COPY + b"\0" + uleb((1 << 64) - 11) + b"\x80" + END_SEQUENCE)
    # SLEB128 of 9 bytes whose sign extension is 1 << 63, then line advances that overflow.
    yield "dwarf_line_table_fuzz", "sleb_int64_min_and_line_overflow", line_program(
        set_address(0x401000) + b"\x03" + b"\x80" * 8 + b"\x40" + COPY +
        advance_line((1 << 63) - 1) + advance_line((1 << 63) - 1) + COPY + advance_pc(4) +
        END_SEQUENCE)
    yield "eh_frame_fuzz", "seed_cie_fde", eh_frame()
    yield "bb_addr_map_fuzz", "seed_every_version_and_feature", bb_addr_map()
    yield "bb_addr_map_fuzz", "seed_32bit_big_endian", bb_addr_map(4, True)
    yield "perf_data_file_fuzz", "seed_minimal", seed_file
    yield "perf_data_file_fuzz", "raw_unaligned_empty_branch_stack", perf_data_file(raw_attr, raw_sample)
    yield "perf_data_file_fuzz", "event_desc_ids_past_section", perf_data_file(
        seed_attr, seed_records(), features=[(12, event_desc_ids_past_section())])
    yield "perf_data_file_fuzz", "zstd_run_length_bomb", perf_data_file(seed_attr, zstd_rle_bomb())
    yield "perf_data_pipe_fuzz", "seed_minimal", perf_data_pipe(seed_attr, seed_records())
    yield "perf_data_pipe_fuzz", "raw_unaligned_empty_branch_stack", perf_data_pipe(raw_attr, raw_sample)
    yield "perf_data_directory_fuzz", "seed_header_and_part", (
        perf_data_file(seed_attr, comm(7, "hot", 100) + mmap2(7, 0x555555554000, 0x2000, 0,
                                                              "/usr/bin/hot", 200)) +
        PART_SEPARATOR + sample(7, 0x555555554100, 300) + sample(7, 0x555555555010, 400))
    yield "perf_script_fuzz", "seed_mmaps_and_samples", PERF_SCRIPT
    ring_records = seed_records()
    yield "live_ring_buffer_fuzz", "seed_records", (
        ring_prefix(IP | TID | TIME | PERIOD, exponent=3, start=512 - 24) + ring_write(ring_records))
    # data_head far ahead of data_tail (more than the 64-byte area), then behind it: the reader
    # must count it, start again from that head, and read on.
    # The kernel has written a header claiming 64 KiB but not published it; then data_head
    # jumps 1 TiB ahead of data_tail (the data area is 64 bytes), then back behind it. The
    # reader must count both, start again from each head, never copy past the area, and read
    # the sample that follows.
    yield "live_ring_buffer_fuzz", "head_far_past_tail", (
        ring_prefix(IP | TID | TIME | PERIOD) + struct.pack("<BH", 1, 8) +
        struct.pack("<IHH", 9, 2, 0xFFF8) + ring_set_head(1 << 40) + ring_set_head(5) +
        ring_write(sample(7, 0x401000, 1)))
    yield "live_ring_buffer_fuzz", "raw_unaligned_empty_branch_stack", (
        ring_prefix(IP | TID | TIME | RAW | BRANCH_STACK, exponent=1) + ring_write(raw_sample))
    yield "proc_maps_fuzz", "seed_maps", PROC_MAPS
    yield "spe_packet_decoder_fuzz", "seed_every_packet_kind", SPE_RECORDS
    # Garbage between records, a record cut by it, then a good record.
    yield "spe_packet_decoder_fuzz", "corrupt_bytes_between_records", (
        SPE_RECORDS[:20] + b"\xff\xfe\x02\x10" + SPE_RECORDS)
    # A record cut inside its last packet, and an alignment packet whose boundary lies past the end.
    yield "spe_packet_decoder_fuzz", "cut_inside_a_packet", SPE_RECORDS[:-3]
    yield "spe_packet_decoder_fuzz", "alignment_past_the_end", SPE_RECORDS + b"\x23\x00"
    yield "fdata_reader_fuzz", "seed_no_lbr", FDATA
    yield "branch_samples_file_fuzz", "seed_every_record", BRANCH_SAMPLES
    yield "branch_samples_file_fuzz", "line_of_spaces", BRANCH_SAMPLES + b"   \n" + b"stacks 1\n"
    samples_ip = b"401010 5\n401020 3\n"
    yield "profile_directory_fuzz", "seed_no_lbr", PART_SEPARATOR.join(
        [META, FDATA, b"", samples_ip, b"", COLLECTION])
    # meta.json whose fields have the wrong types: the next run must not stop on it.
    yield "profile_directory_fuzz", "meta_fields_of_wrong_types", PART_SEPARATOR.join(
        [b'{"samples": "many", "first_sample_ns": -1, "bolt_fdata": 7}', FDATA, b"",
         b"401010 -5\n", BRANCH_SAMPLES, b"[]"])

    yield "daemon_config_fuzz", "seed_every_key", DAEMON_CONFIG
    yield "control_request_fuzz", "seed_requests", CONTROL_REQUESTS
    yield "bpf_counts_fuzz", "seed_two_intervals", bpf_counts_intervals()
    yield "profile_merge_fuzz", "seed_two_hosts", PART_SEPARATOR.join(
        [META, FDATA, b"", PREAGG, AUTOFDO, b"401010 5\n401020 3\n", BRANCH_SAMPLES,
         META, FDATA, b"", PREAGG, AUTOFDO, b"401010 1\n", b""])


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[1] if len(argv) > 1 else os.path.join(here, "regressions")
    for target, name, data in inputs():
        os.makedirs(os.path.join(out, target), exist_ok=True)
        with open(os.path.join(out, target, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv)
