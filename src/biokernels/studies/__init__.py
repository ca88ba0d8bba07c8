"""The studies, one package each, over the shared layers (io, kernels,
solvers, synth, features, metrics, stats, scaling, plotting). A study uses
another only through that study package's public names.
"""
