"""An allocation-heavy, deterministic Python workload: dicts, lists, sets,
strings, tuples and objects built, mutated and dropped in bulk. Prints a
digest of what it computed, which must not depend on the allocator."""
import hashlib
import random


class Node:
    __slots__ = ("key", "children", "payload")

    def __init__(self, key, payload):
        self.key = key
        self.children = []
        self.payload = payload


def build_tree(rng, count):
    nodes = [Node(0, "root")]
    for i in range(1, count):
        node = Node(i, "x" * rng.randrange(1, 200))
        nodes[rng.randrange(len(nodes))].children.append(node)
        nodes.append(node)
    return nodes[0]


def tree_digest(root):
    h = hashlib.sha256()
    stack = [root]
    while stack:
        node = stack.pop()
        h.update(f"{node.key}:{len(node.payload)}:{len(node.children)};".encode())
        stack.extend(node.children)
    return h.hexdigest()


def main():
    rng = random.Random(12345)
    digest = hashlib.sha256()
    for round_ in range(3):
        table = {}
        for i in range(60000):
            key = f"key-{rng.randrange(1 << 20)}-{i % 97}"
            table[key] = [rng.random() for _ in range(i % 13)]
        words = sorted(table, key=lambda k: (len(table[k]), k))
        digest.update("".join(words[::500]).encode())
        joined = "|".join(w.upper() for w in words[:20000])
        digest.update(joined.encode())
        sets = [set(range(i, i + 300)) for i in range(0, 30000, 150)]
        union = set().union(*sets)
        digest.update(str(len(union)).encode())
        del table, words, joined, sets, union
        root = build_tree(rng, 40000)
        digest.update(tree_digest(root).encode())
        blobs = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) * 50
                 for _ in range(3000)]
        digest.update(b"".join(sorted(blobs)[:100]))
        print(f"round {round_}: {digest.hexdigest()[:16]}")
    print("done", digest.hexdigest())


main()
