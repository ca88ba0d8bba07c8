"""The linear-setting theory of Radhakrishnan et al. 2023 (Theorems 1-2,
Corollary 1): closed forms, simulation, sweeps and figures.
"""
