"""A client thread's random stream: one object every draw of a family goes through, which knows
its own position, so a checkpoint carries an integer and a continuation (the next segment, the
next Lambda call, a resume) draws exactly what an uninterrupted thread would have drawn.

Draws are floats of the Mersenne Twister (``random.Random.random``: 53 bits, two 32-bit words
each), made a block at a time in C and handed out by a list iterator's ``__next__`` (C too): a
draw costs about what the generator's own call costs, and nobody counts words by hand. The
position is the number of floats handed out: the blocks made so far less what the current
block's iterator has left (``__length_hint__``).

``RandomStream`` is a ``random.Random``: ``random()`` is the block draw (an instance attribute,
so ``uniform``, ``choices``, ``shuffle``... use it), and ``getrandbits`` (``randint``,
``randrange``, ``choice``) is made from the same floats, so every draw of every method moves the
same position. Its sequence is therefore not ``random.Random(seed)``'s, but it is a pure
function of the seed.
"""
from __future__ import annotations

import itertools
import random
from typing import Any, Iterator, Optional

_MT_RANDOM, _MT_GETRANDBITS, _MT_SEED = random.Random.random, random.Random.getrandbits, random.Random.seed
BLOCK = 256          # floats made at a time (about 10 µs; a checkpoint costs no more than a block)
_TWO53 = float(1 << 53)


class RandomStream(random.Random):
    """A seeded stream of floats whose position (``position``: floats drawn) is its checkpoint.

    ``random`` is one callable for the stream's life: ``resume`` puts the stream elsewhere
    without replacing it (a client takes ``rng.random`` once, when it is built, before the
    worker resumes the stream)."""

    def __init__(self, seed: int) -> None:
        self._seed_value = seed
        self._block: list = []
        self._it: Any = iter(self._block)  # a list iterator (its __length_hint__ is the position)
        self._made = 0          # floats made so far: the current block's end
        self._pending: Optional[list] = None  # where draws go on after a resume (made floats)
        # chain.from_iterable calls iter() on each iterator yielded, and a list iterator's iter()
        # is itself: the draws are C calls into the very iterator whose __length_hint__ is read
        self.random = itertools.chain.from_iterable(self._blocks()).__next__  # type: ignore[method-assign]
        super().__init__(seed)  # calls seed()

    def seed(self, a: Any = None, version: int = 2) -> None:
        _MT_SEED(self, a, version)
        self._restart(0, [])

    def _restart(self, made: int, left: list) -> None:
        """Draws go on with ``left`` (the generator's state being just past them, ``made`` floats
        from the seed), then new blocks: the current block is emptied, which ends its iterator,
        and the chain takes ``left`` next."""
        self._block.clear()
        self._made, self._pending = made, left

    def _blocks(self) -> Iterator[Iterator[float]]:
        make, repeat = _MT_RANDOM, itertools.repeat
        while True:
            if self._pending is not None:
                block, self._pending = self._pending, None
            else:
                block = list(map(make, repeat(self, BLOCK)))  # no Python frame per float
                self._made += BLOCK
            self._block, self._it = block, iter(block)
            yield self._it

    def _left(self) -> list:
        """The made floats not yet drawn."""
        if self._pending is not None:
            return list(self._pending)
        return self._block[len(self._block) - self._it.__length_hint__():]

    @property
    def position(self) -> int:
        """Floats drawn from the seed (the checkpoint's number)."""
        left = len(self._pending) if self._pending is not None else self._it.__length_hint__()
        return self._made - left

    def getrandbits(self, k: int) -> int:
        """k random bits from the same floats (53 bits each; ``randint`` and ``choice`` draw here)."""
        if k <= 0:
            if k < 0:
                raise ValueError("number of bits must be non-negative")
            return 0
        draw = self.random
        if k <= 53:
            return int(draw() * _TWO53) >> (53 - k)
        out, have = 0, 0
        while have < k:
            out = (out << 53) | int(draw() * _TWO53)
            have += 53
        return out >> (have - k)

    def resume(self, position: int) -> None:
        """Put the stream at ``position`` floats from its seed: from this process's cache of the
        states where segments ended, or by drawing them again from the seed (in C, about 20 ns a
        float, measured: a continuation after 100 million draws spends two seconds)."""
        kept = _ended_streams.pop((self._seed_value, position), None)
        if kept is not None:
            state, left = kept
            self.setstate(state)
            self._restart(position + len(left), left)
            return
        _MT_SEED(self, self._seed_value, 2)
        words = 2 * position
        while words > 0:
            n = min(words, 1 << 20)
            _MT_GETRANDBITS(self, 32 * n)
            words -= n
        self._restart(position, [])

    def keep(self) -> int:
        """A segment ended: remember where the stream stands in this process (the next segment
        usually runs here) and return the position for the checkpoint."""
        if len(_ended_streams) >= _ENDED_STREAMS_MAX:
            _ended_streams.clear()
        position = self.position
        _ended_streams[(self._seed_value, position)] = (self.getstate(), self._left())
        return position


# (seed, position) -> (the generator's state there, the made floats not yet drawn): a pure
# function of its key, so another campaign's entry with the same seed is as right as this one's
_ended_streams: dict = {}
_ENDED_STREAMS_MAX = 4096
