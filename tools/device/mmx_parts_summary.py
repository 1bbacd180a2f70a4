"""Developer tool (not shipped): one line per (shape, threads, offset, mode or build, result
hash) from the JSON lines of bench/csrc/mmx_parts.c and tools/device/torch_bf16_time.py,
with every round's median (and busiest-thread) time side by side.
Usage: python mmx_parts_summary.py FILE.jsonl"""
import collections
import json
import sys


def main():
    rows = collections.defaultdict(list)
    for line in open(sys.argv[1]):
        try:
            d = json.loads(line)
        except ValueError:
            print(line.strip())
            continue
        if "lib" in d:
            rows[("torch", d.get("shape", "1024x1024x1024"), d["threads"])].append(
                "%.3f" % d["median_ms"])
            continue
        if d.get("mode") in ("packb", "copya"):
            continue
        key = ("%dx%dx%d" % (d["M"], d["N"], d["K"]), d["threads"], d["offset"],
               d.get("mode", ""), d.get("nx", ""), d.get("dst_fnv", ""))
        rows[key].append("%.3f/%.3f" % (d["median_ms"], d["busiest_ms"]))
    for key in sorted(rows, key=str):
        print(key, " ".join(rows[key]))


if __name__ == "__main__":
    main()
