"""Virtual drug screening by kernel transfer (Radhakrishnan et al. 2023,
Fig. 4): CMAP/L1000 preprocessing, the NTK kernel-ridge source model,
projection and translation to held-out cell lines (``protocol``), and the
scaling-law tables (``tables``).

Public names other studies use (DepMap projects viability through the
screen's source model): ``protocol.ScreenData``, ``protocol.SourceModel``,
``protocol.cell_embedding``, ``protocol.unit_rows``.
"""
