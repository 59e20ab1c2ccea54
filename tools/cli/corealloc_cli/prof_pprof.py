"""The pprof format (profile.proto of github.com/google/pprof), written
with the standard library: protobuf's wire format by hand, then gzip."""
import gzip

SAMPLE_TYPES = (("alloc_objects", "count"), ("alloc_space", "bytes"),
                ("inuse_objects", "count"), ("inuse_space", "bytes"))


def _varint(value):
    value &= (1 << 64) - 1  # negative int64 values: two's complement, ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number, wire_type):
    return _varint(number << 3 | wire_type)


def _int(number, value):
    return _key(number, 0) + _varint(value) if value else b""


def _bytes(number, data):
    return _key(number, 2) + _varint(len(data)) + data


def _packed(number, values):
    return _bytes(number, b"".join(_varint(v) for v in values)) if values else b""


class _Strings:
    def __init__(self):
        self.table, self.index = [""], {"": 0}

    def __call__(self, text):
        if text not in self.index:
            self.index[text] = len(self.table)
            self.table.append(text)
        return self.index[text]


def encode(samples, frames, rate, time_ns, comments=()):
    """samples: [(stack of Frames innermost first, (alloc_objects,
    alloc_space, inuse_objects, inuse_space))]. Returns gzipped bytes."""
    strings = _Strings()
    out = bytearray()
    for name, unit in SAMPLE_TYPES:
        out += _bytes(1, _int(1, strings(name)) + _int(2, strings(unit)))
    mappings, locations, functions = {}, {}, {}
    for frame in frames:
        if frame.mapping not in mappings:
            mappings[frame.mapping] = len(mappings) + 1
    for mapping, mapping_id in mappings.items():
        out += _bytes(3, _int(1, mapping_id) + _int(2, mapping.start) + _int(3, mapping.end) +
                      _int(4, mapping.offset) + _int(5, strings(mapping.path)) + _int(7, 1) +
                      _int(8, 1) + _int(9, 1) + _int(10, 1))
    for frame in frames:
        lines = b""
        for line in frame.lines:
            key = (line.function, line.file)
            if key not in functions:
                functions[key] = len(functions) + 1
            lines += _bytes(4, _int(1, functions[key]) + _int(2, line.line))
        locations[frame.address] = len(locations) + 1
        out += _bytes(4, _int(1, locations[frame.address]) +
                      _int(2, mappings[frame.mapping]) + _int(3, frame.address) + lines)
    for (function, file), function_id in functions.items():
        name = strings(function)
        out += _bytes(5, _int(1, function_id) + _int(2, name) + _int(3, name) + _int(4, strings(file)))
    for stack, values in samples:
        out += _bytes(2, _packed(1, [locations[f.address] for f in stack]) +
                      _packed(2, [round(v) for v in values]))
    period_type = _bytes(11, _int(1, strings("space")) + _int(2, strings("bytes")))
    comment_ids = [strings(c) for c in comments]
    default_type = strings("inuse_space")
    for text in strings.table:
        out += _bytes(6, text.encode())
    out += _int(9, time_ns) + period_type + _int(12, rate)
    for comment in comment_ids:
        out += _int(13, comment)
    out += _int(14, default_type)
    return gzip.compress(bytes(out))
