"""Apache Otava 0.8 with its merge pass's neighbour recomputation corrected, applied to
the installed package at run time (nothing of Otava is copied here).

Otava's `analysis.merge` removes the weakest change point at list position i and then
says "recompute the adjacent change point stats", but calls `recompute(i)` and
`recompute(i + 1)`: after the removal those are the point that followed the removed one
and the point after that. The point *before* the removed one, whose right segment just
grew, keeps the t-test of its old segment, and later decisions (and the figures it
reports) use that stale test. iogate recomputes positions i - 1 and i (both true
neighbours). `fixed()` returns Otava's module with that one call changed, so that every
other line of the reference stays Otava's own.
"""
import inspect
import textwrap

import otava.analysis as analysis

UPSTREAM = "recompute(weakest_cp_index)\n        recompute(weakest_cp_index + 1)"
FIXED = "recompute(weakest_cp_index - 1)\n        recompute(weakest_cp_index)"

_upstream_merge = analysis.merge


def _patched_merge():
    src = textwrap.dedent(inspect.getsource(_upstream_merge))
    if UPSTREAM not in src:
        raise SystemExit("otava.analysis.merge changed: review tests/history/otava_merge_fix.py")
    namespace = dict(analysis.__dict__)
    exec(compile(src.replace(UPSTREAM, FIXED), analysis.__file__, "exec"), namespace)
    return namespace["merge"]


_fixed_merge = _patched_merge()


def change_points(values, window, pvalue, magnitude, fixed):
    """Indices of Otava's change points (`compute_change_points`), upstream or fixed."""
    analysis.merge = _fixed_merge if fixed else _upstream_merge
    try:
        cps, _ = analysis.compute_change_points(
            values, window_len=window, max_pvalue=pvalue, min_magnitude=magnitude
        )
    finally:
        analysis.merge = _upstream_merge
    return [int(c.index) for c in cps]
