"""A flame graph as one self-contained SVG: the program's call stacks,
callers below callees, each frame as wide as the bytes allocated under
it; hovering a frame shows its name, place and share."""
from html import escape

WIDTH = 1200
ROW = 16
MARGIN = 10
TITLE_ROOM = 44
CHAR_WIDTH = 6.6  # of the 11px monospace text, to cut labels that would not fit


def human(size):
    """Bytes in binary units: 512 B, 3.9 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{size:.0f} B"
        size /= 1024
    return ""


def frame_name(frame):
    """The frame's function, after the functions inlined into it (outermost
    first), and its innermost line."""
    line = frame.lines[-1]  # the function the code is in; inlined ones are above it
    return " > ".join(inlined.function for inlined in reversed(frame.lines)), line


def _tree(stacks):
    """{name: [value, children, place]} from (outermost-first names, value)."""
    root = [0.0, {}, ""]
    for path, value in stacks:
        root[0] += value
        node = root
        for name, place in path:
            node = node[1].setdefault(name, [0.0, {}, place])
            node[0] += value
    return root


def _color(name):
    h = 0
    for ch in name:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return f"rgb({205 + h % 50},{80 + (h >> 8) % 120},{40 + (h >> 16) % 40})"


def render(samples, title, subtitle):
    """samples: [(stack of Frames innermost first, value)]. Returns SVG text."""
    paths = []
    for stack, value in samples:
        if value > 0:
            path = []
            for frame in reversed(stack):
                name, line = frame_name(frame)
                place = f"{line.file}:{line.line}" if line.file else frame.mapping.path
                path.append((name, place))
            paths.append((path or [("(no stack)", "")], value))
    root = _tree(paths)
    depth = 0
    rects = []
    total = root[0] or 1.0

    def walk(node, x, level):
        nonlocal depth
        depth = max(depth, level)
        for name, child in sorted(node[1].items()):
            width = child[0] / total * (WIDTH - 2 * MARGIN)
            if width >= 0.5:
                rects.append((x, level, width, name, child[2], child[0]))
                walk(child, x, level + 1)
            x += width

    rects.append((MARGIN, 0, WIDTH - 2 * MARGIN, "all", "", root[0]))
    walk(root, MARGIN, 1)
    height = TITLE_ROOM + (depth + 1) * ROW + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fdfcf7"/>',
           f'<text x="{WIDTH / 2}" y="18" font-size="15" text-anchor="middle">{escape(title)}</text>',
           f'<text x="{WIDTH / 2}" y="34" fill="#555" text-anchor="middle">{escape(subtitle)}</text>']
    for x, level, width, name, place, value in rects:
        y = height - MARGIN - (level + 1) * ROW
        tip = f"{name} ({place}) " if place else f"{name} "
        tip += f"{human(value)}, {value / total * 100:.1f}%"
        label = name if len(name) * CHAR_WIDTH < width - 4 else name[:max(int((width - 4) / CHAR_WIDTH) - 2, 0)]
        if label and label != name:
            label += ".."
        out.append(f'<g><title>{escape(tip)}</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{ROW - 1}" rx="2" '
                   f'fill="{"#e8e3d3" if level == 0 else _color(name)}"/>')
        if label:
            out.append(f'<text x="{x + 3:.1f}" y="{y + ROW - 4}">{escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
