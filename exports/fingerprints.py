"""Per-item fingerprints for the release manifest (Omni-StoryBench App. C): normalized-text SHA-256 and a
word 8-gram MinHash sketch, fully specified so that anyone can recompute them without this code.

MinHash: each shingle (8 consecutive normalized words joined by one space; a text shorter than 8 words is one
shingle) is hashed to x = the first 4 bytes, little-endian, of BLAKE2b-64 of its UTF-8 bytes. Permutation i maps
x to ((a_i * x + b_i) mod (2^61 - 1)) mod 2^32, with a_i, b_i the two little-endian uint32 halves of
BLAKE2b-64(b"omnicurate-minhash-" + str(i)) (a_i forced odd). The sketch is the minimum per permutation,
written as 128 big-endian uint32 in hex. Two sketches estimate the Jaccard similarity of the shingle sets as
the fraction of equal positions.
"""

from __future__ import annotations

import hashlib
import unicodedata

import numpy as np

NUM_PERM = 128
SHINGLE_WORDS = 8
_MERSENNE = np.uint64((1 << 61) - 1)
_LOW32 = np.uint64(0xFFFFFFFF)

SKETCH_SPEC = {
    "method": "minhash",
    "shingles": f"word {SHINGLE_WORDS}-grams of the normalized text (one shingle if shorter)",
    "num_perm": NUM_PERM,
    "shingle_hash": "first 4 bytes (little-endian) of BLAKE2b-64(shingle UTF-8)",
    "permutations": "((a_i*x + b_i) mod (2^61-1)) mod 2^32; a_i|1, b_i = uint32 halves of "
    "BLAKE2b-64('omnicurate-minhash-<i>')",
    "encoding": "128 big-endian uint32, hex",
    "normalization": "Unicode NFKC, casefold, whitespace runs folded to one space, trimmed",
}


def normalize_text(text: str) -> str:
    """NFKC, casefold, whitespace folded: the form both hashes and sketches are computed on."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_sha256(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def _blake64(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=8).digest()


def _permutations() -> tuple[np.ndarray, np.ndarray]:
    a = np.empty(NUM_PERM, dtype=np.uint64)
    b = np.empty(NUM_PERM, dtype=np.uint64)
    for i in range(NUM_PERM):
        digest = _blake64(f"omnicurate-minhash-{i}".encode())
        a[i] = int.from_bytes(digest[:4], "little") | 1
        b[i] = int.from_bytes(digest[4:], "little")
    return a, b


_A, _B = _permutations()


def shingles(text: str) -> set[str]:
    words = normalize_text(text).split(" ")
    if len(words) < SHINGLE_WORDS:
        return {" ".join(words)}
    return {" ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}


def minhash(text: str) -> np.ndarray:
    """The sketch as 128 uint32 values; a*x + b stays below 2^64, so uint64 arithmetic is exact."""
    xs = np.array(
        sorted(int.from_bytes(_blake64(s.encode("utf-8"))[:4], "little") for s in shingles(text)), dtype=np.uint64
    )
    values = (xs[:, None] * _A[None, :] + _B[None, :]) % _MERSENNE & _LOW32
    return values.min(axis=0).astype(np.uint32)


def minhash_hex(text: str) -> str:
    return minhash(text).astype(">u4").tobytes().hex()


def sketch_similarity(sketch_a: str, sketch_b: str) -> float:
    """Estimated Jaccard similarity of two hex sketches."""
    a = np.frombuffer(bytes.fromhex(sketch_a), dtype=">u4")
    b = np.frombuffer(bytes.fromhex(sketch_b), dtype=">u4")
    return float(np.mean(a == b))
