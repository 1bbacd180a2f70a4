# budget: 90
# Lead: the whole GPU suite (issues 5, 12, 14): one JSON per round; round B's is committed.
python3 -m bench gpu --json $1/gpu.json 2>&1 | tail -60
