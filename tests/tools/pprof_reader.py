"""A reader of pprof profiles for the tests, written from profile.proto
independently of the tool's writer: it checks what the writer wrote."""
import gzip


def _varint(data, i):
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data):
    """(field number, value) pairs; length-delimited values as bytes."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            value, i = data[i:i + length], i + length
        else:
            raise ValueError(f"unexpected wire type {wire}")
        yield number, value


def _packed(value):
    if isinstance(value, int):
        return [value]
    out, i = [], 0
    while i < len(value):
        v, i = _varint(value, i)
        out.append(v - (1 << 64) if v >= 1 << 63 else v)
    return out


def read(path):
    """{"types": [...], "samples": [(function names innermost first, {type: value})]}"""
    with open(path, "rb") as f:
        data = gzip.decompress(f.read())
    strings, types, raw_samples, locations, functions = [], [], [], {}, {}
    for number, value in _fields(data):
        if number == 6:
            strings.append(value.decode())
        elif number == 1:
            types.append(dict(_fields(value)).get(1, 0))
        elif number == 2:
            ids, values = [], []
            for n, v in _fields(value):
                if n == 1:
                    ids += _packed(v)
                elif n == 2:
                    values += _packed(v)
            raw_samples.append((ids, values))
        elif number == 4:
            fields = list(_fields(value))
            location_id = dict(fields)[1]
            locations[location_id] = [dict(_fields(v)).get(1) for n, v in fields if n == 4]
        elif number == 5:
            fields = dict(_fields(value))
            functions[fields[1]] = fields.get(2, 0)
    type_names = [strings[t] for t in types]
    samples = []
    for ids, values in raw_samples:
        names = [strings[functions[f]] for location in ids for f in locations[location]]
        samples.append((names, dict(zip(type_names, values))))
    return {"types": type_names, "samples": samples}


def by_site(profile, site_names, value):
    """The value summed per named site (a sample counts for the first of
    site_names on its stack); samples naming none sum under None."""
    totals = {}
    for names, values in profile["samples"]:
        site = next((n for n in names if n in site_names), None)
        totals[site] = totals.get(site, 0) + values[value]
    return totals
