"""Writes the wire hex of protocol/vectors/{messages,streams}.json as libFuzzer seed files.

Usage: python3 Fuzz/seed_corpus.py VECTORS_DIR OUT_DIR
Each vector becomes several seeds: one per chunking mode of FrameDecoderFuzz (the first byte of an
input picks the chunking; the rest is the stream).
"""
import json, os, sys

vectors, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
count = 0
for name in ("messages.json", "streams.json"):
    with open(os.path.join(vectors, name)) as f:
        for i, vector in enumerate(json.load(f)):
            wire = bytes.fromhex(vector["hex"])
            for control in (0x00, 0x01, 0x1D, 0x02, 0x82, 0x03):
                with open(os.path.join(out, f"{name.split('.')[0]}-{i:03d}-{control:02x}"), "wb") as g:
                    g.write(bytes([control]) + wire)
                count += 1
print(count)
