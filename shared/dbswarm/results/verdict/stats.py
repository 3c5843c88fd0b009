"""A noise-aware regression verdict, in pure Python (no numpy / scipy: the compare function
is a Lambda and these are small samples).

- ``mann_whitney``: the Mann–Whitney U test, exact (the q-binomial generating function) when
  there are no ties, the normal approximation with tie correction otherwise.
- ``bootstrap_change``: the relative change of the medians (current / reference − 1) and its
  percentile-bootstrap confidence interval.
- ``e_divisive``: change points of a series, E-Divisive with means (Matteson & James 2014, the
  method MongoDB's performance CI uses: ``signal-processing-algorithms``; Apache Otava is its
  successor), each candidate's significance from a permutation test.
- ``judge``: one metric of one run, current samples against reference samples: effect,
  interval, p-value, Cliff's delta, and whether it regressed.

Apache Otava (numpy 2.2, scipy, google-cloud-bigquery, slack-sdk …) and
signal-processing-algorithms (numpy, scipy, gevent, structlog; Python ~3.11 only) were
evaluated (``pip download``): both pull numpy and scipy (≈100 MB unpacked) into a layer
for an O(n²) statistic on at most a few hundred points; this module is ~250 lines.
"""
from __future__ import annotations

import math
import random
from typing import Optional, Sequence

# ---- Mann–Whitney U -----------------------------------------------------------------------------

def _u_distribution(m: int, n: int) -> list[int]:
    """Counts of the U statistic's values 0..m*n over all C(m+n, m) orderings (no ties):
    the coefficients of the Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1-q^(n+i))/(1-q^i)."""
    size = m * n + 1
    poly = [0] * size
    poly[0] = 1
    for i in range(1, m + 1):
        k = n + i  # multiply by (1 - q^k)
        for d in range(size - 1, k - 1, -1):
            poly[d] -= poly[d - k]
        for d in range(i, size):  # divide by (1 - q^i): a running sum with stride i
            poly[d] += poly[d - i]
    return poly


def mann_whitney(x: Sequence[float], y: Sequence[float], alternative: str = "less") -> dict:
    """U of ``x`` (pairs x > y, ties half) and its p-value for ``alternative``: "less" (x tends
    to be smaller than y), "greater", or "two-sided"."""
    m, n = len(x), len(y)
    if not m or not n:
        raise ValueError("both samples need at least one value")
    u = 0.0
    ties = False
    for a in x:
        for b in y:
            if a > b:
                u += 1
            elif a == b:
                u += 0.5
                ties = True
    pooled = sorted(list(x) + list(y))
    if not ties and len(set(pooled)) < len(pooled):
        ties = True  # ties inside a sample do not change U, but the exact table assumes none
    if not ties:
        counts = _u_distribution(m, n)
        total = sum(counts)
        k = int(u)
        lower = sum(counts[:k + 1]) / total           # P(U <= u)
        upper = sum(counts[k:]) / total               # P(U >= u)
        method = "exact"
    else:
        mean = m * n / 2
        groups: dict = {}
        for v in pooled:
            groups[v] = groups.get(v, 0) + 1
        tie_term = sum(t ** 3 - t for t in groups.values())
        var = m * n / 12 * ((m + n + 1) - tie_term / ((m + n) * (m + n - 1)))
        sd = math.sqrt(var) if var > 0 else 0.0
        if sd == 0:
            lower = upper = 1.0
        else:
            lower = _phi((u - mean + 0.5) / sd)
            upper = 1 - _phi((u - mean - 0.5) / sd)
        method = "normal approximation (ties)"
    p = {"less": lower, "greater": upper, "two-sided": min(1.0, 2 * min(lower, upper))}[alternative]
    return {"u": u, "p": min(1.0, p), "n_x": m, "n_y": n, "method": method,
            "cliffs_delta": round(2 * u / (m * n) - 1, 4)}


def min_p(m: int, n: int) -> float:
    """The smallest one-sided p-value an exact test of sizes m and n can give: 1 / C(m+n, m)."""
    return 1 / math.comb(m + n, m)


def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        out[i] = running
    return out


# ---- one value against a reference: the prediction interval --------------------------------------

def t_cdf(t: float, df: int) -> float:
    """P(T <= t) of Student's t with ``df`` degrees of freedom (Simpson's rule over the density:
    no scipy in the Lambda)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    x = min(abs(t), 1e3)
    steps = 2000
    h = x / steps
    total = 0.0
    for i in range(steps + 1):
        w = 1 if i in (0, steps) else (4 if i % 2 else 2)
        total += w * math.exp(log_c - (df + 1) / 2 * math.log1p((i * h) ** 2 / df))
    half = min(0.5, total * h / 3)
    return 0.5 + half if t >= 0 else 0.5 - half


def predict(value: float, reference: Sequence[float], higher_is_better: bool) -> dict:
    """One run against a reference of m runs: the one-sided p-value of the run being that much
    worse if it came from the reference's (normal) distribution — the prediction interval
    mean ± t·s·√(1 + 1/m), a test that needs no second run tonight. The rank of one value
    among m cannot fall below alpha 0.025 before m ≈ 40 (1/(m+1)); the interval can."""
    m = len(reference)
    if m < 2:
        raise ValueError("a prediction interval needs at least two reference values")
    mean = sum(reference) / m
    sd = math.sqrt(sum((v - mean) ** 2 for v in reference) / (m - 1))
    if sd == 0:
        worse = value < mean if higher_is_better else value > mean
        p = 0.0 if worse else 1.0
        t = None
    else:
        t = (value - mean) / (sd * math.sqrt(1 + 1 / m))
        p = t_cdf(t, m - 1) if higher_is_better else 1 - t_cdf(t, m - 1)
    ref_med = median(reference)
    change = value / ref_med - 1 if ref_med else None
    worse_by = None if change is None else (-change if higher_is_better else change)
    return {"n": 1, "n_reference": m, "median": value, "reference_median": ref_med, "mean_reference": mean,
            "sd_reference": sd, "t": t, "p": round(p, 6),
            "change": None if change is None else round(change, 4),
            "worse_by": None if worse_by is None else round(worse_by, 4),
            "test": f"prediction interval (Student's t, {m - 1} df, one-sided: current "
                    f"{'lower' if higher_is_better else 'higher'})"}


# ---- effect and its interval --------------------------------------------------------------------

def median(values: Sequence[float]) -> float:
    s = sorted(values)
    k = len(s)
    return s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2


def bootstrap_change(current: Sequence[float], reference: Sequence[float], confidence: float = 0.95,
                     resamples: int = 2000, seed: int = 0) -> dict:
    """median(current) / median(reference) − 1, and its percentile-bootstrap interval
    (each sample resampled with replacement, ``resamples`` times)."""
    ref_med = median(reference)
    change = median(current) / ref_med - 1 if ref_med else None
    if change is None or len(current) < 2 and len(reference) < 2:
        return {"change": change, "ci": None, "confidence": confidence}
    rng = random.Random(seed)
    cur, ref = list(current), list(reference)
    stats = []
    for _ in range(resamples):
        rm = median(rng.choices(ref, k=len(ref)))
        if rm:
            stats.append(median(rng.choices(cur, k=len(cur))) / rm - 1)
    stats.sort()
    tail = (1 - confidence) / 2
    lo = stats[int(math.floor(tail * (len(stats) - 1)))]
    hi = stats[int(math.ceil((1 - tail) * (len(stats) - 1)))]
    return {"change": change, "ci": [lo, hi], "confidence": confidence}


# ---- E-Divisive means --------------------------------------------------------------------------

def _best_split(x: Sequence[float], min_size: int) -> tuple[Optional[int], float]:
    """The split τ (x[:τ] | x[τ:]) maximizing the energy statistic
    Q(τ) = m·k/(m+k) · (2/(m·k)·Σ|a−b| − 1/C(m,2)·Σ_{left pairs}|a−a'| − 1/C(k,2)·Σ_{right pairs}|b−b'|),
    computed for every τ in O(n²) by moving one point at a time from the right to the left."""
    n = len(x)
    if n < 2 * min_size:
        return None, 0.0
    left_pairs = 0.0  # Σ over unordered pairs inside the left part
    right_pairs = 0.0
    for i in range(n):
        xi = x[i]
        for j in range(i + 1, n):
            right_pairs += abs(xi - x[j])
    between = 0.0
    best, best_q = None, -math.inf
    for t in range(1, n):  # move x[t-1] from right to left; left = x[:t]
        v = x[t - 1]
        to_left = 0.0
        for a in range(t - 1):
            to_left += abs(v - x[a])
        to_right = 0.0
        for b in range(t, n):
            to_right += abs(v - x[b])
        left_pairs += to_left
        right_pairs -= to_right
        between += to_right - to_left
        m, k = t, n - t
        if m < min_size or k < min_size:
            continue
        q = (m * k / n) * (2 * between / (m * k) - left_pairs / (m * (m - 1) / 2) - right_pairs / (k * (k - 1) / 2))
        if q > best_q:
            best, best_q = t, q
    return best, best_q


def e_divisive(series: Sequence[float], alpha: float = 0.05, permutations: int = 199, min_size: int = 3,
               seed: int = 0) -> list[dict]:
    """Change points of ``series``: indexes i where series[i:] differs in distribution from
    the segment before it. Bisects recursively; a candidate is kept when the permutation
    test's p-value (its Q against the best Q of the segment's shuffles) is below ``alpha``."""
    rng = random.Random(seed)
    found = []

    def segment(lo: int, hi: int) -> None:
        x = list(series[lo:hi])
        tau, q = _best_split(x, min_size)
        if tau is None:
            return
        exceed, limit = 0, alpha * (permutations + 1)
        done = 0
        for _ in range(permutations):
            rng.shuffle(x)
            done += 1
            if _best_split(x, min_size)[1] >= q:
                exceed += 1
                if exceed + 1 > limit:  # p can no longer fall below alpha: not significant
                    return
        p = (exceed + 1) / (done + 1)
        if p >= alpha:
            return
        point = lo + tau
        before, after = series[lo:point], series[point:hi]
        found.append({"index": point, "p": round(p, 4), "q": round(q, 6),
                      "before_median": median(before), "after_median": median(after),
                      "change": median(after) / median(before) - 1 if median(before) else None})
        segment(lo, point)
        segment(point, hi)

    segment(0, len(series))
    return sorted(found, key=lambda c: c["index"])


# ---- one metric's verdict ------------------------------------------------------------------------

def judge(current: Sequence[float], reference: Sequence[float], higher_is_better: bool, *, alpha: float = 0.05,
          min_effect: float = 0.02, seed: int = 0, resamples: int = 2000) -> dict:
    """``current`` against ``reference`` for one metric. The one-sided Mann–Whitney test asks
    whether current is worse (lower throughput, higher latency); ``regressed`` needs
    p < alpha and a median change worse than ``min_effect`` (a significant 0.5 % is not a
    regression worth a failed pipeline). ``alpha`` may be lowered by the caller for
    multiple comparisons (Holm): ``significant`` is then recomputed there."""
    test = mann_whitney(current, reference, "less" if higher_is_better else "greater")
    eff = bootstrap_change(current, reference, 0.95, resamples, seed)
    change = eff["change"]
    worse = None if change is None else (-change if higher_is_better else change)
    return {"n": len(current), "n_reference": len(reference),
            "median": median(current), "reference_median": median(reference),
            "change": None if change is None else round(change, 4),
            "ci": None if eff["ci"] is None else [round(v, 4) for v in eff["ci"]],
            "confidence": eff["confidence"], "p": round(test["p"], 6), "test": f"Mann–Whitney U ({test['method']}, "
            f"one-sided: current {'lower' if higher_is_better else 'higher'})", "cliffs_delta": test["cliffs_delta"],
            "worse_by": None if worse is None else round(worse, 4), "min_effect": min_effect,
            "min_p": min_p(len(current), len(reference)),
            "regressed": bool(test["p"] < alpha and worse is not None and worse > min_effect)}
