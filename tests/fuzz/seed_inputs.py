#!/usr/bin/env python3
"""Builds fuzz inputs from real files, for tests/fuzz/run.sh's seed corpora and for
tests/fuzz/make_regressions.py. Each subcommand writes one input file:

  parts OUT FILE [NAME=FILE...]   FILE, then each NAME=FILE as a part named NAME
                                  (tests/fuzz/fuzz_support.h: kPartSeparator, "NAME\\n" + bytes)
  plain-parts OUT FILE...         the files as consecutive unnamed parts
  ring OUT PERF_DATA [DATA_BYTES] the records of a file-mode perf.data as live_ring_buffer_fuzz
                                  reads them: its attr, then one write per pass
  eh-frame OUT SECTION_BYTES      an .eh_frame section for eh_frame_fuzz (64-bit, little-endian)
  bb-addr-map OUT SECTION_BYTES   an SHT_LLVM_BB_ADDR_MAP section for bb_addr_map_fuzz (its first
                                  byte 0: 8-byte little-endian addresses)
"""
import struct
import sys

PART_SEPARATOR = b"\n--- profcollect fuzz part ---\n"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def parts(out, main, named):
    data = read(main)
    for item in named:
        name, path = item.split("=", 1)
        data += PART_SEPARATOR + name.encode() + b"\n" + read(path)
    write(out, data)


def plain_parts(out, files):
    write(out, PART_SEPARATOR.join(read(f) for f in files))


def ring_input(attr, records, data_exponent=6):
    """live_ring_buffer_fuzz's layout (see that file): data size 64 << exponent, the attr's
    fields, a start position, then passes of (op, u16 length, bytes)."""
    sample_type, read_format, branch_sample_type, regs_user, regs_intr, sample_id_all = attr
    data_size = 64 << data_exponent
    out = bytearray()
    out += struct.pack("<B", data_exponent)
    out += struct.pack("<Q", sample_type)
    out += struct.pack("<B", read_format & 0x1F)
    out += struct.pack("<I", branch_sample_type & 0xFFFFFFFF)
    out += struct.pack("<QQ", regs_user, regs_intr)
    out += struct.pack("<B", 1 if sample_id_all else 0)
    out += struct.pack("<Q", data_size - 24)  # start near the end, so records wrap at once
    chunk = bytearray()
    for rec in records:
        if len(chunk) + len(rec) > data_size:
            out += struct.pack("<BH", 0, len(chunk)) + chunk
            chunk = bytearray()
        if len(rec) <= data_size:
            chunk += rec
    if chunk:
        out += struct.pack("<BH", 0, len(chunk)) + chunk
    return bytes(out)


def perf_data_records(path, limit):
    """The first attr's layout and the kernel records (types below 64) of a file-mode perf.data."""
    data = read(path)
    magic, header_size, attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from(
        "<QQQQQQQ", data, 0)
    if magic != 0x32454C4946524550:
        raise SystemExit(path + ": not a file-mode perf.data")
    attr = data[attrs_off:attrs_off + attr_size]
    sample_type, read_format, flags = struct.unpack_from("<QQQ", attr, 24)
    branch_sample_type = struct.unpack_from("<Q", attr, 72)[0] if len(attr) >= 80 else 0
    regs_user = struct.unpack_from("<Q", attr, 80)[0] if len(attr) >= 88 else 0
    regs_intr = struct.unpack_from("<Q", attr, 96)[0] if len(attr) >= 104 else 0
    layout = (sample_type, read_format, branch_sample_type, regs_user, regs_intr, (flags >> 18) & 1)
    end = data_off + data_size if data_size else len(data)
    pos, records, total = data_off, [], 0
    while pos + 8 <= end and total < limit:
        rtype, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8:
            break
        if rtype < 64:
            records.append(data[pos:pos + size])
            total += size
        pos += size
    return layout, records


def eh_frame(out, section):
    write(out, b"\x01" + read(section))


def bb_addr_map(out, section):
    write(out, b"\x00" + read(section))


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    command, out = argv[1], argv[2]
    if command == "parts":
        parts(out, argv[3], argv[4:])
    elif command == "plain-parts":
        plain_parts(out, argv[3:])
    elif command == "ring":
        limit = int(argv[4]) if len(argv) > 4 else 16384
        layout, records = perf_data_records(argv[3], limit)
        write(out, ring_input(layout, records))
    elif command == "eh-frame":
        eh_frame(out, argv[3])
    elif command == "bb-addr-map":
        bb_addr_map(out, argv[3])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
