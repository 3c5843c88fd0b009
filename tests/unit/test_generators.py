"""Distributions, seeded, checked with chi-square against what they must produce."""
import collections
import hashlib
import os
import random
import string
import struct
import subprocess
import sys

import pytest

from dbswarm.families.generators import (
    Hotspot,
    ScrambledZipfian,
    SkewedLatest,
    SysbenchSpecial,
    Uniform,
    Zipfian,
    _make_pool,
    fnvhash64,
    shared_pool,
    zeta_static,
)
from dbswarm.families.ycsb import key_name

# chi-square critical values at p = 0.001 (df -> value), so a correct generator fails 1 in 1000 seeds;
# the seeds are fixed, so the tests are deterministic.
CHI2_999 = {9: 27.88, 19: 43.82, 49: 86.66, 61: 100.89}
N = 100_000


def chi2(observed, expected):
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected))


def test_uniform_chi_square():
    g, n = Uniform(random.Random(11), 0, 19), 20
    counts = [0] * n
    for _ in range(N):
        counts[g.next()] += 1
    assert chi2(counts, [N / n] * n) < CHI2_999[19]


def _ycsb_zipfian_cdf(n, theta):
    """The distribution YCSB's ZipfianGenerator (Gray et al.'s method) produces, derived from
    its formula: X=0 if u*zetan < 1, X=1 if < 1+0.5^theta, else floor(n*(eta*u-eta+1)^alpha)."""
    zetan = zeta_static(n, theta)
    alpha = 1 / (1 - theta)
    eta = (1 - (2 / n) ** (1 - theta)) / (1 - zeta_static(2, theta) / zetan)
    u1, u2 = 1 / zetan, (1 + 0.5 ** theta) / zetan

    def below(k):  # P(X < k)
        if k <= 0:
            return 0.0
        if k == 1:
            return u1
        if k == 2:
            return u2
        uk = ((k / n) ** (1 / alpha) + eta - 1) / eta
        return min(1.0, max(u2, uk))
    return [below(k + 1) - below(k) for k in range(n)]


def test_zipfian_matches_ycsb_algorithm_chi_square():
    n, theta = 20, 0.99
    g = Zipfian(random.Random(5), 0, n, theta)
    counts = [0] * n
    for _ in range(N):
        counts[g.next()] += 1
    probs = _ycsb_zipfian_cdf(n, theta)
    assert chi2(counts, [p * N for p in probs]) < CHI2_999[19]
    # the two most popular items follow Zipf's law exactly
    zn = zeta_static(n, theta)
    assert counts[0] / N == pytest.approx(1 / zn, rel=0.02)
    assert counts[1] / N == pytest.approx(0.5 ** theta / zn, rel=0.03)


def test_scrambled_zipfian_is_skewed_and_scattered():
    g = ScrambledZipfian(random.Random(3), 0, 999)
    counts = [0] * 1000
    for _ in range(N):
        counts[g.next()] += 1
    top = sorted(range(1000), key=counts.__getitem__, reverse=True)
    assert sum(counts[i] for i in top[:100]) / N > 0.25       # 10% of the keys: a quarter of requests
    assert max(top[:10]) > 100                                 # popular keys are not the low numbers
    assert min(counts) >= 0 and sum(counts) == N


def test_latest_prefers_recent_keys():
    state = {"n": 1000}
    g = SkewedLatest(random.Random(9), lambda: state["n"])
    draws = [g.next() for _ in range(20_000)]
    assert all(0 <= d < 1000 for d in draws)
    assert sum(d >= 900 for d in draws) / len(draws) > 0.5
    state["n"] = 2000
    assert max(g.next() for _ in range(2000)) >= 1900


def test_hotspot_fractions():
    g = Hotspot(random.Random(4), 0, 999, 0.2, 0.8)
    hot = sum(g.next() < 200 for _ in range(N))
    assert hot / N == pytest.approx(0.8 + 0.2 * 0, abs=0.01)


def test_sysbench_special_sends_three_quarters_to_one_percent():
    g = SysbenchSpecial(random.Random(8), 1, 10_000)
    counts = {}
    for _ in range(N):
        v = g.next()
        counts[v] = counts.get(v, 0) + 1
    assert min(counts) >= 1 and max(counts) <= 10_000
    assert sum(sorted(counts.values())[-100:]) / N == pytest.approx(0.76, abs=0.02)


def test_fnvhash64_is_fnv1a_over_little_endian_long():
    def reference(v):
        h = 0xCBF29CE484222325
        for byte in struct.pack("<q", v):
            h = ((h ^ byte) * 1099511628211) & (2 ** 64 - 1)
        signed = h - 2 ** 64 if h >= 2 ** 63 else h
        return abs(signed)
    rng = random.Random(7)
    # every path of the table-driven version: below 2^32, below 2^40, above, and negative longs
    values = [0, 1, 2, 255, 256, 65535, 65536, 10 ** 6, 2 ** 32 - 1, 2 ** 32, 2 ** 40 - 1, 2 ** 40 + 7,
              2 ** 63 - 1, -1, -2 ** 63]
    values += [rng.randrange(1 << bits) for bits in (16, 24, 32, 40, 48, 63) for _ in range(200)]
    values += [-rng.randrange(1, 1 << 63) for _ in range(200)]
    for v in values:
        assert fnvhash64(v) == reference(v), v


def test_key_names_follow_ycsb():
    assert key_name(42, ordered=True, zeropadding=1) == "user42"
    assert key_name(42, ordered=True, zeropadding=6) == "user000042"
    assert key_name(42, ordered=False, zeropadding=1) == "user" + str(fnvhash64(42))


def test_same_seed_same_sequence():
    a = ScrambledZipfian(random.Random(1), 0, 10 ** 6)
    b = ScrambledZipfian(random.Random(1), 0, 10 ** 6)
    assert [a.next() for _ in range(100)] == [b.next() for _ in range(100)]


def test_sysbench_uniform_chi_square_and_bounds():
    from dbswarm.families.generators import SysbenchUniform
    g, n = SysbenchUniform(random.Random(12), 1, 20), 20
    counts = [0] * n
    for _ in range(N):
        v = g.next()
        assert 1 <= v <= 20
        counts[v - 1] += 1
    assert chi2(counts, [N / n] * n) < CHI2_999[19]


def test_scrambled_zipfian_inlines_zipfian_exactly():
    # ScrambledZipfian.next inlines Zipfian.next: the same draws give the same items
    a = ScrambledZipfian(random.Random(11), 5, 10 ** 6)
    z = Zipfian(random.Random(11), 0, ScrambledZipfian.ITEM_COUNT, 0.99, zetan=ScrambledZipfian.ZETAN)
    assert [a.next() for _ in range(2000)] == [5 + fnvhash64(z.next()) % (10 ** 6 - 5 + 1) for _ in range(2000)]


@pytest.mark.parametrize("alphabet", ["0123456789", string.ascii_letters + string.digits])
def test_a_pool_draws_its_alphabet_uniformly(alphabet):
    # bytes mapped b % n without dropping those past the last multiple of n favour the first
    # 256 % n characters by a fifth or more: chi-square in the tens of thousands
    pool = _make_pool(alphabet, 1 << 20)
    assert len(pool) == 1 << 20 and set(pool) == set(alphabet)
    counts = collections.Counter(pool)
    n = len(alphabet)
    assert chi2([counts[c] for c in alphabet], [len(pool) / n] * n) < CHI2_999[n - 1]


def test_every_client_thread_shares_its_process_s_pools_and_draws_nothing_for_them():
    from dbswarm.families.stream import RandomStream
    from dbswarm.families.sysbench import SysbenchClient, SysbenchWorkload
    from dbswarm.families.tpcc.model import Strings
    from dbswarm.families.ycsb import YcsbClient, YcsbWorkload

    w = YcsbWorkload.model_validate({"family": "ycsb", "recordcount": 10, "requestdistribution": "uniform"})
    rngs = [RandomStream(1), RandomStream(2)]
    a, b = (YcsbClient(w, rng, i, 2) for i, rng in enumerate(rngs))
    assert a.pool is b.pool and len(a.pool) == 1 << 22
    assert [rng.position for rng in rngs] == [0, 0]  # each thread's stream is its operations' alone
    sw = SysbenchWorkload.model_validate({"family": "sysbench"})
    assert SysbenchClient(sw, random.Random(1)).pool is SysbenchClient(sw, random.Random(2)).pool
    s1, s2 = Strings(random.Random(1)), Strings(random.Random(2))
    assert s1.alnum is s2.alnum and s1.digits is s2.digits and s1.alnum is not s1.digits
    assert shared_pool("0123456789", 1 << 20) is s1.digits


def test_a_pool_is_the_same_string_in_every_process():
    # seeded by its alphabet and size (no stream, no hash(): every shard's values alike)
    code = ("import hashlib; from dbswarm.families.ycsb import value_pool; "
            "print(hashlib.sha256(value_pool().encode()).hexdigest())")
    from dbswarm.families.ycsb import value_pool
    here = hashlib.sha256(value_pool().encode()).hexdigest()
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert out.stdout.strip() == here
