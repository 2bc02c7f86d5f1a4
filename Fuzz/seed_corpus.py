"""Writes libFuzzer seed files.

Usage: python3 Fuzz/seed_corpus.py VECTORS_DIR OUT_DIR
  Writes the wire hex of protocol/vectors/{messages,streams}.json: each vector becomes several
  seeds, one per chunking mode of FrameDecoderFuzz (the first byte of an input picks the chunking;
  the rest is the stream).
Usage: python3 Fuzz/seed_corpus.py --drivers N VECTORS_DIR SEEDS_DIR... OUT_DIR
  DriverFuzz's seeds: the native vectors and every committed seed of the driver targets, each behind
  every driver index below N (DriverFuzz's byte 0); libFuzzer finds which wire each driver takes.
"""
import json, os, sys


def vector_wires(vectors):
    for name in ("messages.json", "streams.json"):
        with open(os.path.join(vectors, name)) as f:
            for i, vector in enumerate(json.load(f)):
                yield f"{name.split('.')[0]}-{i:03d}", bytes.fromhex(vector["hex"])


def frame_decoder_seeds(vectors, out):
    count = 0
    for name, wire in vector_wires(vectors):
        for control in (0x00, 0x01, 0x1D, 0x02, 0x82, 0x03):
            with open(os.path.join(out, f"{name}-{control:02x}"), "wb") as g:
                g.write(bytes([control]) + wire)
            count += 1
    return count


def driver_seeds(drivers, vectors, seed_dirs, out):
    inputs = [(name, bytes([0x00]) + wire) for name, wire in vector_wires(vectors)]
    for directory in seed_dirs:
        for name in sorted(os.listdir(directory)):
            with open(os.path.join(directory, name), "rb") as f:
                inputs.append((f"{os.path.basename(directory)}-{name}", f.read()))
    for index in range(drivers):
        for name, data in inputs:
            with open(os.path.join(out, f"{index}-{name}"), "wb") as g:
                g.write(bytes([index]) + data)
    return drivers * len(inputs)


args = sys.argv[1:]
if args and args[0] == "--drivers":
    drivers, vectors, *seed_dirs, out = int(args[1]), *args[2:]
    os.makedirs(out, exist_ok=True)
    print(driver_seeds(drivers, vectors, seed_dirs, out))
else:
    vectors, out = args
    os.makedirs(out, exist_ok=True)
    print(frame_decoder_seeds(vectors, out))
